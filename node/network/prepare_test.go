package network

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// recording is a binding that records what it was asked to set up.
type recording struct {
	got []Interface
	err error
}

func (r *recording) Setup(_ netns.NsHandle, iface Interface) (*apiv1.InterfaceNetwork, error) {
	r.got = append(r.got, iface)
	if r.err != nil {
		return nil, r.err
	}
	return &apiv1.InterfaceNetwork{Name: iface.Name, TapDevice: TapName(iface.Index), MacAddress: iface.MAC.String()}, nil
}

func vmiWith(ifaces []virtv1.Interface, networks []virtv1.Network) *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "0d9c4a52-7d43-4cd1-9a55-1b7f2a3c4d5e"},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain:   virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: ifaces}},
			Networks: networks,
		},
	}
}

func podNetwork(name, cidr string) virtv1.Network {
	return virtv1.Network{Name: name, NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{VMNetworkCIDR: cidr}}}
}

func TestPrepareHandsEachInterfaceToItsBinding(t *testing.T) {
	masq, bridge := &recording{}, &recording{}
	b := Bindings{Masquerade: masq, Bridge: bridge}
	vmi := vmiWith([]virtv1.Interface{{
		Name: "default", Ports: []virtv1.Port{{Port: 80, Protocol: "TCP"}},
		InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}},
	}}, []virtv1.Network{podNetwork("default", "198.19.250.7/24")})

	nics, err := b.Prepare(netns.None(), vmi, Owner{UID: 107, GID: 107})
	if err != nil {
		t.Fatal(err)
	}
	if len(masq.got) != 1 || len(bridge.got) != 0 || len(nics) != 1 {
		t.Fatalf("masquerade got %d, bridge %d, NICs %d; want 1, 0, 1", len(masq.got), len(bridge.got), len(nics))
	}
	got := masq.got[0]
	if got.Name != "default" || got.Index != 0 || got.PodInterface != "eth0" || got.TapOwner != 107 || got.TapGroup != 107 ||
		got.GuestCIDR != netip.MustParsePrefix("198.19.250.0/24") || len(got.Ports) != 1 || got.SpecMAC {
		t.Errorf("interface handed to the binding: %+v", got)
	}
	if got.MAC.String() != GuestMAC(string(vmi.UID), "default").String() {
		t.Errorf("MAC %s, want the generated %s", got.MAC, GuestMAC(string(vmi.UID), "default"))
	}

	// The spec's MAC wins, and is marked as the spec's.
	vmi.Spec.Domain.Devices.Interfaces[0].MacAddress = "02:00:00:00:00:2a"
	vmi.Spec.Domain.Devices.Interfaces[0].Masquerade, vmi.Spec.Domain.Devices.Interfaces[0].Bridge = nil, &virtv1.InterfaceBridge{}
	vmi.Spec.Networks[0].Pod.VMNetworkCIDR = ""
	if _, err := b.Prepare(netns.None(), vmi, Owner{}); err != nil {
		t.Fatal(err)
	}
	if len(bridge.got) != 1 || bridge.got[0].MAC.String() != "02:00:00:00:00:2a" || !bridge.got[0].SpecMAC ||
		bridge.got[0].GuestCIDR != netip.MustParsePrefix(virtv1.DefaultVMNetworkCIDR) {
		t.Errorf("bridge got %+v, want the spec's MAC marked as such and the default CIDR", bridge.got)
	}
}

func TestPrepareErrors(t *testing.T) {
	masq := &recording{err: errors.New("netlink: operation not permitted")}
	b := Bindings{Masquerade: masq}
	masquerade := virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}
	for name, tc := range map[string]struct {
		vmi  *virtv1.VirtualMachineInstance
		want string
	}{
		"binding fails": {vmiWith([]virtv1.Interface{{Name: "default", InterfaceBindingMethod: masquerade}},
			[]virtv1.Network{podNetwork("default", "")}), `interface "default" (masquerade): netlink: operation not permitted`},
		"no plugin": {vmiWith([]virtv1.Interface{{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}},
			[]virtv1.Network{podNetwork("default", "")}), `no plugin for binding "bridge"`},
		"not the pod network": {vmiWith([]virtv1.Interface{{Name: "lan", InterfaceBindingMethod: masquerade}},
			[]virtv1.Network{{Name: "lan"}}), "not on the pod network"},
		"bad CIDR": {vmiWith([]virtv1.Interface{{Name: "default", InterfaceBindingMethod: masquerade}},
			[]virtv1.Network{podNetwork("default", "198.19.250.0/31")}), "at least 4 addresses"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := b.Prepare(netns.None(), tc.vmi, Owner{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Prepare error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A generated MAC is the same at every start, differs between VMIs and
// interfaces, and is a locally administered unicast address.
func TestGuestMAC(t *testing.T) {
	a := GuestMAC("uid-1", "default")
	if a.String() != GuestMAC("uid-1", "default").String() {
		t.Error("GuestMAC is not stable")
	}
	if a.String() == GuestMAC("uid-2", "default").String() || a.String() == GuestMAC("uid-1", "other").String() {
		t.Error("GuestMAC repeats across VMIs or interfaces")
	}
	if a[0]&1 != 0 || a[0]&2 == 0 {
		t.Errorf("%s is not a locally administered unicast address", a)
	}
}
