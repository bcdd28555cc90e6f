package masquerade

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TableName is the nftables table (family ip) that holds every rule of the
// binding in the pod's namespace.
const TableName = "virt_masquerade"

// port is one forwarded port; number 0 stands for all ports of proto.
type port struct {
	proto  byte
	number uint16
}

// forwardedPorts returns the ports to forward to the guest: those listed,
// or every TCP and UDP port when none is.
func forwardedPorts(listed []virtv1.Port) ([]port, error) {
	if len(listed) == 0 {
		return []port{{proto: unix.IPPROTO_TCP}, {proto: unix.IPPROTO_UDP}}, nil
	}
	ports := make([]port, 0, len(listed))
	for _, p := range listed {
		if p.Port < 1 || p.Port > 65535 {
			return nil, fmt.Errorf("port %d is not between 1 and 65535", p.Port)
		}
		switch strings.ToUpper(p.Protocol) {
		case "", "TCP":
			ports = append(ports, port{proto: unix.IPPROTO_TCP, number: uint16(p.Port)})
		case "UDP":
			ports = append(ports, port{proto: unix.IPPROTO_UDP, number: uint16(p.Port)})
		default:
			return nil, fmt.Errorf("port %d: protocol %q is neither TCP nor UDP", p.Port, p.Protocol)
		}
	}
	return ports, nil
}

// rules is what the table says.
type rules struct {
	podInterface string
	podIP, guest netip.Addr
	ports        []port
}

// replaceRules makes TableName in ns hold exactly r, in one transaction:
// the table is added (so that deleting it cannot fail), deleted with
// whatever an earlier run left in it, and built again. A reader never sees
// it half-built, and a second run leaves one set of rules.
func replaceRules(ns netns.NsHandle, r rules) error {
	c, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return err
	}
	table := &nftables.Table{Family: nftables.TableFamilyIPv4, Name: TableName}
	c.AddTable(table)
	c.DelTable(table)
	c.AddTable(table)

	nat := func(name string, hook *nftables.ChainHook, priority *nftables.ChainPriority) *nftables.Chain {
		return c.AddChain(&nftables.Chain{
			Name: name, Table: table, Type: nftables.ChainTypeNAT, Hooknum: hook, Priority: priority,
		})
	}
	// From the pod network to the pod IP: to the guest, source untouched.
	prerouting := nat("prerouting", nftables.ChainHookPrerouting, nftables.ChainPriorityNATDest)
	// From processes in the pod to the pod IP: to the guest as well.
	output := nat("output", nftables.ChainHookOutput, nftables.ChainPriorityNATDest)
	// The guest's own traffic out of the pod: behind the pod IP.
	postrouting := nat("postrouting", nftables.ChainHookPostrouting, nftables.ChainPriorityNATSource)

	for _, p := range r.ports {
		c.AddRule(&nftables.Rule{Table: table, Chain: prerouting, Exprs: r.dnat(p, true)})
		c.AddRule(&nftables.Rule{Table: table, Chain: output, Exprs: r.dnat(p, false)})
	}
	c.AddRule(&nftables.Rule{Table: table, Chain: postrouting, Exprs: r.masquerade()})
	return c.Flush()
}

// dnat is "[iifname POD] ip daddr PODIP meta l4proto P [th dport N] dnat
// to GUEST".
func (r rules) dnat(p port, fromPodInterface bool) []expr.Any {
	var e []expr.Any
	if fromPodInterface {
		e = append(e, matchInterface(expr.MetaKeyIIFNAME, r.podInterface)...)
	}
	e = append(e, matchIP(16, r.podIP)...)
	e = append(e,
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p.proto}},
	)
	if p.number != 0 {
		e = append(e,
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(p.number)},
		)
	}
	return append(e,
		&expr.Immediate{Register: 1, Data: r.guest.AsSlice()},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
	)
}

// masquerade is "oifname POD ip saddr GUEST masquerade".
func (r rules) masquerade() []expr.Any {
	e := matchInterface(expr.MetaKeyOIFNAME, r.podInterface)
	e = append(e, matchIP(12, r.guest)...)
	return append(e, &expr.Masq{})
}

func matchInterface(key expr.MetaKey, name string) []expr.Any {
	// Interface names compare as the kernel's zero-padded IFNAMSIZ buffer.
	padded := make([]byte, unix.IFNAMSIZ)
	copy(padded, name)
	return []expr.Any{
		&expr.Meta{Key: key, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: padded},
	}
}

// matchIP compares the IPv4 header's address at offset (12 source, 16
// destination) with ip.
func matchIP(offset uint32, ip netip.Addr) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ip.AsSlice()},
	}
}
