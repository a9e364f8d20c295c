#!/usr/bin/env bash
# Makes the Java trust and key stores the security tests read, with the
# JDK's own keytool (JDK 17: PKCS12 with PBES2/AES and HMAC-SHA-256, JKS
# with the JDK's key protection), so the tests read what a Java client's
# driver file names, not what the Go readers themselves would write. Run
# here; the outputs are committed (the tests need no Java). Test material
# only: the passwords are below, the CA's own key is thrown away.
set -euo pipefail
cd "$(dirname "$0")"
rm -f ./*.jks ./*.p12 ./*.crt ./*.key
trap 'rm -f ca.p12' EXIT
days=36500
kt() { keytool "$@" 2>/dev/null; }

kt -genkeypair -alias ca -keyalg EC -groupname secp256r1 -dname CN=streambench-test-ca -ext bc:c \
  -validity $days -keystore ca.p12 -storetype PKCS12 -storepass capass
kt -exportcert -rfc -alias ca -keystore ca.p12 -storepass capass > ca.crt

# Trust stores: the CA as a trusted certificate entry.
kt -importcert -noprompt -alias ca -file ca.crt -keystore truststore.jks -storetype JKS -storepass changeit
kt -importcert -noprompt -alias ca -file ca.crt -keystore truststore.p12 -storetype PKCS12 -storepass changeit
# openssl writes no trust-anchor attribute: the JDK does not trust it.
openssl pkcs12 -export -nokeys -in ca.crt -out openssl-trust.p12 -passout pass:changeit

# The client's key store: key "keypass" apart from the store's "storepass"
# (ssl.key.password), the chain client <- CA.
kt -genkeypair -alias client -keyalg EC -groupname secp256r1 -dname CN=alice -validity $days \
  -keystore keystore.jks -storetype JKS -storepass storepass -keypass keypass
kt -certreq -alias client -keystore keystore.jks -storepass storepass -keypass keypass |
  kt -gencert -alias ca -keystore ca.p12 -storepass capass -validity $days -rfc > client.crt
kt -importcert -noprompt -alias ca -file ca.crt -keystore keystore.jks -storepass storepass
kt -importcert -alias client -file client.crt -keystore keystore.jks -storepass storepass -keypass keypass
kt -delete -alias ca -keystore keystore.jks -storepass storepass
kt -importkeystore -srckeystore keystore.jks -srcstorepass storepass -srckeypass keypass -srcalias client \
  -destkeystore keystore.p12 -deststoretype PKCS12 -deststorepass storepass -destkeypass storepass
# The same key in PEM (ssl.keystore.type=PEM, Pulsar's tlsKeyFilePath).
openssl pkcs12 -in keystore.p12 -passin pass:storepass -nodes -nocerts | openssl pkey -out client.key
