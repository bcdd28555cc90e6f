package bridge

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

func TestLease(t *testing.T) {
	p, a := netip.MustParsePrefix, netip.MustParseAddr
	for _, tc := range []struct {
		name   string
		config podConfig
		want   *apiv1.DHCPLease
	}{{
		name: "gateway in the subnet",
		config: podConfig{Address: p("198.18.100.2/24"), Gateway: a("198.18.100.1"),
			Routes: []route{{Dst: p("198.18.128.0/17"), Via: a("198.18.100.1")}}},
		want: &apiv1.DHCPLease{Address: "198.18.100.2/24", Router: "198.18.100.1",
			Routes: []*apiv1.Route{{Destination: "198.18.128.0/17", Gateway: "198.18.100.1"}}},
	}, {
		name:   "gateway outside the subnet gets an on-link route, first",
		config: podConfig{Address: p("198.18.100.2/32"), Gateway: a("198.18.0.1"), Routes: []route{{Dst: p("198.18.128.0/17"), Via: a("198.18.0.1")}}},
		want: &apiv1.DHCPLease{Address: "198.18.100.2/32", Router: "198.18.0.1", Routes: []*apiv1.Route{
			{Destination: "198.18.0.1/32"}, {Destination: "198.18.128.0/17", Gateway: "198.18.0.1"}}},
	}, {
		name: "an on-link route to the gateway is not repeated and goes first",
		config: podConfig{Address: p("198.18.100.2/32"), Gateway: a("198.18.0.1"), Routes: []route{
			{Dst: p("198.18.128.0/17"), Via: a("198.18.0.1")}, {Dst: p("198.18.0.0/24")}}},
		want: &apiv1.DHCPLease{Address: "198.18.100.2/32", Router: "198.18.0.1", Routes: []*apiv1.Route{
			{Destination: "198.18.0.0/24"}, {Destination: "198.18.128.0/17", Gateway: "198.18.0.1"}}},
	}, {
		name:   "no gateway",
		config: podConfig{Address: p("198.18.100.2/24")},
		want:   &apiv1.DHCPLease{Address: "198.18.100.2/24"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.ServerInterface, tc.want.ServerAddress = "k6t-eth0", "169.254.75.10"
			if diff := cmp.Diff(tc.want, tc.config.lease("k6t-eth0"), protocmp.Transform()); diff != "" {
				t.Errorf("lease (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAlias(t *testing.T) {
	config := podConfig{
		Address: netip.MustParsePrefix("198.18.100.2/24"),
		MAC:     "0a:58:c6:12:64:02",
		Gateway: netip.MustParseAddr("198.18.100.1"),
	}
	// As many routes as fit: the limit is worth knowing.
	for i := 0; ; i++ {
		more := config
		more.Routes = append(more.Routes[:len(more.Routes):len(more.Routes)],
			route{Dst: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(i), 0}), 24), Via: config.Gateway})
		if _, err := more.alias(); err != nil {
			if !strings.Contains(err.Error(), "more than the 255 of an interface alias") {
				t.Fatal(err)
			}
			break
		}
		config = more
	}
	t.Logf("an alias holds %d routes of 198.19.x.0/24 via 198.18.100.1", len(config.Routes))
	if len(config.Routes) < 4 {
		t.Errorf("an alias holds only %d routes", len(config.Routes))
	}
	config.Routes = append(config.Routes[:1], route{Dst: netip.MustParsePrefix("198.18.0.1/32")})

	alias, err := config.alias()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := parseAlias(alias)
	if !ok {
		t.Fatalf("parseAlias(%q) failed", alias)
	}
	if diff := cmp.Diff(config, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
		cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("the alias %q reads back (-want +got):\n%s", alias, diff)
	}
	for _, notOurs := range []string{"", "uplink", `{"ip":"198.18.100.2/24"}`, `{"mac":"0a:58:c6:12:64:02"}`} {
		if _, ok := parseAlias(notOurs); ok {
			t.Errorf("parseAlias(%q) accepted it", notOurs)
		}
	}
}
