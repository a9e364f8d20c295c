// Command pause is the local cluster's pod sandbox image: a static process
// that holds the pod's namespaces and does nothing until the kubelet stops the
// sandbox. The usual registry.k8s.io/pause cannot be pulled here (no registry),
// and any process that blocks until SIGTERM serves the same purpose.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
