package netutil_test

import (
	"testing"

	"github.com/vishvananda/netns"

	"kubevirt.dev/virt/node/network/internal/nettest"
	"kubevirt.dev/virt/node/network/netutil"
)

func TestDo(t *testing.T) {
	nettest.RequireRoot(t)
	ns := nettest.NewNS(t)
	err := netutil.Do(ns, func() error {
		current, err := netns.Get()
		if err != nil {
			return err
		}
		defer current.Close()
		if !current.Equal(ns) {
			t.Errorf("fn ran in %s, want %s", current, ns)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEnsureTap(t *testing.T) {
	nettest.RequireRoot(t)
	ns := nettest.NewNS(t)
	h := nettest.Handle(t, ns)
	tap, err := netutil.EnsureTap(ns, h, "tap0", 107, 108, false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := netutil.EnsureTap(ns, h, "tap0", 107, 108, false)
	if err != nil || again.Attrs().Index != tap.Attrs().Index {
		t.Errorf("EnsureTap again: %v, %v; want the same tap", again, err)
	}
	_, err = netutil.EnsureTap(ns, h, "tap0", 107, 107, false)
	if want := "tap tap0 belongs to 107:108, not 107:107"; err == nil || err.Error() != want {
		t.Errorf("EnsureTap for another group: %v; want %q", err, want)
	}
	_, err = netutil.EnsureTap(ns, h, "lo", 107, 107, false)
	if want := "lo exists and is a device, not a tap"; err == nil || err.Error() != want {
		t.Errorf("EnsureTap over lo: %v; want %q", err, want)
	}
}

func TestEnableIPv4Forwarding(t *testing.T) {
	nettest.RequireRoot(t)
	ns := nettest.NewNS(t)
	nettest.SetSysctl(t, ns, "net.ipv4.conf.all.forwarding", "0")
	h := nettest.Handle(t, ns)
	lo, err := h.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := netutil.EnableIPv4Forwarding(ns, lo); err != nil {
		t.Fatal(err)
	}
	if got := nettest.Sysctl(t, ns, "net.ipv4.conf.lo.forwarding"); got != "1" {
		t.Errorf("lo's forwarding is %s, want 1", got)
	}
	if got := nettest.Sysctl(t, ns, "net.ipv4.conf.all.forwarding"); got != "0" {
		t.Errorf("the namespace's forwarding is %s, want 0", got)
	}
}
