// Command svcprobe checks that ClusterIP Services work on the local cluster
// (local-cluster.sh check-services): its image has no shell, so one binary is
// both ends.
//
//	svcprobe serve -addr :8080     answer every TCP connection with the pod's name
//	      [-mark FILE]             (and first write the pod's name into FILE, a
//	                               volume's: check-nodes finds it on the node's disk)
//	svcprobe dial HOST:PORT...     connect to each, print what answered; exit 1
//	                               if any did not
//	svcprobe api HOST...           GET /version from the API server at each
//	                               HOST:443 as in-cluster clients do (the
//	                               service account's CA and token); "env" is
//	                               $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount/"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: svcprobe serve [-addr :8080] | dial HOST:PORT...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		addr := fs.String("addr", ":8080", "TCP address to listen on")
		mark := fs.String("mark", "", "file to write the pod's name into first")
		_ = fs.Parse(os.Args[2:])
		if err := serve(*addr, *mark); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "dial", "api":
		probe := dial
		if os.Args[1] == "api" {
			probe = api
		}
		failed := false
		for _, a := range os.Args[2:] {
			got, err := probe(a)
			if err != nil {
				failed = true
				fmt.Printf("%s: FAIL %v\n", a, err)
				continue
			}
			fmt.Printf("%s: ok, answered by %s\n", a, got)
		}
		if failed || len(os.Args) < 3 {
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "svcprobe: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

func serve(addr, mark string) error {
	name, _ := os.Hostname()
	if mark != "" {
		if err := os.WriteFile(mark, []byte(name+"\n"), 0o644); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("serving on %s as %s\n", addr, name)
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			fmt.Printf("connection from %s\n", c.RemoteAddr())
			_, _ = fmt.Fprintf(c, "%s\n", name)
		}()
	}
}

func dial(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%s -> %s)", strings.TrimSpace(line), c.LocalAddr(), c.RemoteAddr()), nil
}

func api(host string) (string, error) {
	addr := net.JoinHostPort(host, "443")
	if host == "env" {
		addr = net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	}
	ca, err := os.ReadFile(saDir + "ca.crt")
	if err != nil {
		return "", err
	}
	token, err := os.ReadFile(saDir + "token")
	if err != nil {
		return "", err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/version", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET https://%s/version: %s %v", addr, resp.Status, err)
	}
	return fmt.Sprintf("kube-apiserver %s at https://%s", v.GitVersion, addr), nil
}
