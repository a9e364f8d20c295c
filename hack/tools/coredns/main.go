// CoreDNS with only the plugins the local cluster needs: cluster DNS for
// Services and headless Services (the coordinator finds its workers through
// one), bound to the CNI bridge address. Its own module (go.mod and go.sum
// committed, built with -mod=readonly by hack/local-cluster/build-binaries.sh)
// keeps CoreDNS's dependencies out of streambench's and pins them.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

// The order is CoreDNS's plugin.cfg order: it decides which plugin sees a
// query first.
var directives = []string{"bind", "errors", "log", "kubernetes"}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
