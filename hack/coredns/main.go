// Command coredns is the local cluster's DNS (hack/cluster/dns/): CoreDNS,
// pinned in go.mod and built from the module proxy by hack/build-coredns.sh,
// with only the plugins a cluster DNS needs. It is its own module so that the
// platform's module never inherits CoreDNS's dependency graph.
//
// There is deliberately no forward (or any other upstream) plugin: the
// cluster answers for cluster.local and the reverse zones of its own
// addresses only, and nothing is ever passed on to the host's resolver,
// which lies outside the 198.18.0.0/15 the cluster may talk to. A name
// outside those zones is answered REFUSED.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives is the execution order of the plugins above, a subsequence of
// CoreDNS's own plugin.cfg order: a Corefile naming any other plugin is
// refused at startup.
var directives = []string{
	"ready",
	"health",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"kubernetes",
}

func main() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		panic(err)
	}
	coremain.Run()
}
