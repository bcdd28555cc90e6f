package netutil

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ipv4DevconfForwarding is IPV4_DEVCONF_FORWARDING of linux/ip.h, which
// x/sys/unix does not have.
const ipv4DevconfForwarding = 1

// EnableIPv4Forwarding turns on IPv4 forwarding of the packets that arrive
// on link, in the namespace ns. The kernel decides per input device
// (ip_route_input_slow checks the input device's forwarding), so the
// namespace-wide net.ipv4.ip_forward is not needed. It goes through
// rtnetlink (the per-device devconf of RTM_SETLINK, what
// /proc/sys/net/ipv4/conf/DEV/forwarding writes) because a node agent's
// /proc/sys is read-only.
func EnableIPv4Forwarding(ns netns.NsHandle, link netlink.Link) error {
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(link.Attrs().Index)
	req.AddData(msg)

	conf := nl.NewRtAttr(unix.IFLA_INET_CONF, nil)
	conf.AddRtAttr(ipv4DevconfForwarding, nl.Uint32Attr(1))
	inet := nl.NewRtAttr(unix.AF_INET, nil)
	inet.AddChild(conf)
	spec := nl.NewRtAttr(unix.IFLA_AF_SPEC, nil)
	spec.AddChild(inet)
	req.AddData(spec)

	// The request opens its own socket, in the namespace of its thread.
	err := Do(ns, func() error {
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("enable IPv4 forwarding on %s: %w", link.Attrs().Name, err)
	}
	return nil
}
