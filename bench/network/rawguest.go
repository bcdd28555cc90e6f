package network

import (
	"fmt"
	"net/netip"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/rawguest"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/launcher/domain"
)

// Addresses of the plain-tap network: only 198.19.253.0/30 and
// 198.19.254.0/24, in the benchmarking block 198.18.0.0/15 that the local
// cluster's pod and service ranges (198.18.0.0/24, 198.19.0.0/24) leave
// free.
var Addresses = rawguest.Addresses{
	HostLink: "vb-net0",
	Host:     netip.MustParsePrefix("198.19.253.1/30"),
	Uplink:   netip.MustParsePrefix("198.19.253.2/30"),
	Gateway:  netip.MustParsePrefix("198.19.254.1/24"),
	Guest:    netip.MustParsePrefix("198.19.254.2/24"),
}

// GuestAddr is the raw guest's lease.
var GuestAddr = Addresses.Guest

// Names of the raw guest.
const (
	// rawName is its VMI's name, host name and the domain's name part.
	rawName = "net-raw"
	// guestMAC is its NIC's address (locally administered).
	guestMAC = "02:62:65:6e:00:02"
)

// rawDomain is the raw guest's domain: the platform's VMI (VMI), defaulted
// as the API does, through the launcher's converter, with its pod-network
// interface on the plain tap; its files go in dir.
func rawDomain(dir, typ string, guest startup.Guest) (name, xml, serialLog string, err error) {
	vmi := VMI(rawName)
	vmi.Namespace, vmi.UID = "bench", types.UID("00000000-0000-4000-8000-00000000e7e7")
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	host := domain.Host{
		Type: typ, Kernel: guest.Kernel, Initrd: guest.Initrd,
		SerialSocket: filepath.Join(dir, "serial0.sock"), SerialLog: filepath.Join(dir, "serial0.log"),
		VNCSocket:  filepath.Join(dir, "vnc.sock"),
		Interfaces: map[string]domain.Interface{virtv1.DefaultPodNetworkName: {Tap: rawguest.TapName, MAC: guestMAC, MTU: rawguest.LinkMTU}},
	}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return "", "", "", fmt.Errorf("raw guest's domain: %w", err)
	}
	if xml, err = d.Marshal(); err != nil {
		return "", "", "", fmt.Errorf("raw guest's domain: %w", err)
	}
	return d.Name, xml, host.SerialLog, nil
}
