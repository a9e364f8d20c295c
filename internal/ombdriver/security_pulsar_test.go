package ombdriver

import (
	"reflect"
	"strings"
	"testing"
)

func TestMapSecurityPulsar(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    *sec
		dropped []string
		err     []string
	}{
		{
			name: "OMB's names: TLS by the service URL, hostname not verified (OMB's default), token inline",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  httpUrl: https://b:8443\n  tlsAllowInsecureConnection: false\n  tlsTrustCertsFilePath: /etc/pulsar/ca.pem\n  authentication:\n    plugin: org.apache.pulsar.client.impl.auth.AuthenticationToken\n    data: token:eyJhbGciOiJSUzI1NiJ9.payload.sig\n",
			want: &sec{protocol: "pulsar+ssl", mechanism: "Token", trust: "client: tlsTrustCertsFilePath", trustType: "PEM", skipHostname: true, token: "client: authentication.data",
				keys: []string{"client: authentication.data", "client: authentication.plugin", "client: tlsAllowInsecureConnection", "client: tlsTrustCertsFilePath"}},
		},
		{
			name: "the Java client's names: token file, hostname verified",
			file: pulsarHead + "client:\n  serviceUrl: pulsar://b:6650\n  tlsTrustCertsFilePath: /etc/pulsar/ca.pem\n  tlsHostnameVerificationEnable: true\n  authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationToken\n  authParams: file:///etc/pulsar/token\n",
			want: &sec{protocol: "pulsar+ssl", mechanism: "Token", trust: "client: tlsTrustCertsFilePath", token: "client: authParams"},
		},
		{
			name: "OAuth2 client credentials (StreamNative)",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  tlsEnableHostnameVerification: true\n  authPluginClassName: org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2\n  authParams: '{\"type\":\"client_credentials\",\"issuerUrl\":\"https://auth.example\",\"privateKey\":\"file:///etc/pulsar/key.json\",\"audience\":\"urn:sn:pulsar:o:i\"}'\n",
			want: &sec{protocol: "pulsar+ssl", mechanism: "OAuth2", oauth: &OAuth2{IssuerURL: "https://auth.example", Audience: "urn:sn:pulsar:o:i",
				KeyFile: Secret{From: "client: authParams (privateKey)", Path: "/etc/pulsar/key.json"}}},
		},
		{
			name: "AuthenticationTls: the client certificate, TLS on by it",
			file: pulsarHead + "client:\n  tlsTrustCertsFilePath: /ca.pem\n  authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationTls\n  authParams: tlsCertFile:/c.pem,tlsKeyFile:/k.pem\n",
			want: &sec{protocol: "pulsar+ssl", trust: "client: tlsTrustCertsFilePath", client: "client: authParams", skipHostname: true},
		},
		{
			name: "a key store trust store (useKeyStoreTls)",
			file: pulsarHead + "client:\n  useKeyStoreTls: true\n  tlsTrustStorePath: /t.jks\n  tlsTrustStorePassword: changeit\n  tlsAllowInsecureConnection: true\n",
			want: &sec{protocol: "pulsar+ssl", trust: "client: tlsTrustStorePath", trustType: "JKS", skipHostname: true, insecure: true},
		},
		{
			name:    "TLS booleans with a plain service URL and no certificates: nothing to apply",
			file:    pulsarHead + "client:\n  serviceUrl: pulsar://localhost:6650\n  tlsAllowInsecureConnection: false\n  tlsEnableHostnameVerification: false\n  tlsTrustStorePath: /t.jks\n",
			dropped: []string{"client: tlsTrustStorePath", "client: tlsAllowInsecureConnection=false", "client: tlsEnableHostnameVerification=false"},
		},
		{
			name: "an authentication plugin streambench does not map",
			file: pulsarHead + "client:\n  authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationBasic\n  authParams: '{\"userId\":\"alice\",\"password\":\"alice-secret\"}'\n",
			err:  []string{"client: authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationBasic is not an authentication plugin streambench's Pulsar client maps"},
		},
		{
			name: "OMB's and the Java client's name disagree",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  tlsEnableHostnameVerification: true\n  tlsHostnameVerificationEnable: false\n",
			err:  []string{"client: tlsHostnameVerificationEnable: disagrees with tlsEnableHostnameVerification; keep one"},
		},
		{
			name: "TLS ciphers and protocols",
			file: pulsarHead + "client:\n  serviceUrl: pulsar+ssl://b:6651\n  tlsCiphers: [TLS_AES_128_GCM_SHA256]\n",
			err:  []string{"client: tlsCiphers: streambench's clients use Go's TLS"},
		},
		{
			name: "OAuth2 without an issuer",
			file: pulsarHead + "client:\n  authPlugin: org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2\n  authParams: '{\"privateKey\":\"file:///k.json\"}'\n",
			err:  []string{"client: authParams: AuthenticationOAuth2 needs issuerUrl"},
		},
		{
			name: "a token left as a ${...} placeholder",
			file: pulsarHead + "client:\n  authentication:\n    plugin: org.apache.pulsar.client.impl.auth.AuthenticationToken\n    data: token:${astraToken}\n",
			err:  []string{"client: authentication.data: the token holds a ${...} placeholder: substitute it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, dropped, err := MapSecurity(f)
			if len(tt.err) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error with %q", tt.err)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				noSecret(t, "the error", err.Error())
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, tt.want)
			var keys []string
			for _, d := range dropped {
				keys = append(keys, d.Key)
			}
			if !reflect.DeepEqual(keys, tt.dropped) {
				t.Errorf("dropped %q, want %q", keys, tt.dropped)
			}
		})
	}
}
