package netutil

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// TapFlags are the flags the tap is created with, the ones QEMU opens it
// with: no packet information header, a virtio-net header, and the
// single-queue mode of a tap that one QEMU process owns.
const TapFlags = netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR | netlink.TUNTAP_ONE_QUEUE

// MultiQueueTapFlags are the flags of a multi-queue tap
// (networkInterfaceMultiqueue): QEMU attaches one file descriptor per queue,
// and the kernel refuses that on a tap created without IFF_MULTI_QUEUE.
const MultiQueueTapFlags = netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR | netlink.TUNTAP_MULTI_QUEUE

// Lookup returns the link named name in h's namespace and false when there
// is none.
func Lookup(h *netlink.Handle, name string) (netlink.Link, bool, error) {
	link, err := h.LinkByName(name)
	if errors.As(err, &netlink.LinkNotFoundError{}) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("look up %s: %w", name, err)
	}
	return link, true, nil
}

// EnsureBridge returns the bridge name, creating it when missing, with the
// MTU mtu. Once set by hand, a bridge's MTU no longer follows its ports'.
func EnsureBridge(h *netlink.Handle, name string, mtu int) (netlink.Link, error) {
	link, found, err := Lookup(h, name)
	if err != nil {
		return nil, err
	}
	if !found {
		if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: mtu}}); err != nil {
			return nil, fmt.Errorf("create bridge %s: %w", name, err)
		}
		if link, err = h.LinkByName(name); err != nil {
			return nil, fmt.Errorf("look up bridge %s: %w", name, err)
		}
	}
	if link.Type() != "bridge" {
		return nil, fmt.Errorf("%s exists and is a %s, not a bridge", name, link.Type())
	}
	if link.Attrs().MTU != mtu {
		if err := h.LinkSetMTU(link, mtu); err != nil {
			return nil, fmt.Errorf("set the MTU of %s to %d: %w", name, mtu, err)
		}
	}
	return link, nil
}

// EnsureTap returns the persistent tap name in the namespace ns (h works in
// it), creating it with TapFlags (MultiQueueTapFlags when multiqueue) and
// owned by owner:group, so that an unprivileged process of that user can
// open it. An existing tap is left alone (QEMU may have it open), but it
// must belong to owner:group.
func EnsureTap(ns netns.NsHandle, h *netlink.Handle, name string, owner, group uint32, multiqueue bool) (netlink.Link, error) {
	link, found, err := Lookup(h, name)
	if err != nil {
		return nil, err
	}
	if !found {
		flags := TapFlags
		if multiqueue {
			flags = MultiQueueTapFlags
		}
		tap := &netlink.Tuntap{
			LinkAttrs: netlink.LinkAttrs{Name: name},
			Mode:      netlink.TUNTAP_MODE_TAP,
			Flags:     flags,
			Owner:     owner,
			Group:     group,
		}
		// /dev/net/tun creates the tap in the namespace of the thread that
		// opens it, not in h's.
		if err := Do(ns, func() error { return netlink.LinkAdd(tap) }); err != nil {
			return nil, fmt.Errorf("create tap %s: %w", name, err)
		}
		if link, err = h.LinkByName(name); err != nil {
			return nil, fmt.Errorf("look up tap %s: %w", name, err)
		}
	}
	tap, ok := link.(*netlink.Tuntap)
	if !ok || tap.Mode != netlink.TUNTAP_MODE_TAP {
		return nil, fmt.Errorf("%s exists and is a %s, not a tap", name, link.Type())
	}
	if tap.Owner != owner || tap.Group != group {
		return nil, fmt.Errorf("tap %s belongs to %d:%d, not %d:%d", name, tap.Owner, tap.Group, owner, group)
	}
	return link, nil
}

// AttachPort gives port the MTU mtu and makes it a port of bridge, up.
func AttachPort(h *netlink.Handle, port, bridge netlink.Link, mtu int) error {
	name := port.Attrs().Name
	if port.Attrs().MTU != mtu {
		if err := h.LinkSetMTU(port, mtu); err != nil {
			return fmt.Errorf("set the MTU of %s to %d: %w", name, mtu, err)
		}
	}
	if port.Attrs().MasterIndex != bridge.Attrs().Index {
		if err := h.LinkSetMaster(port, bridge); err != nil {
			return fmt.Errorf("add %s to %s: %w", name, bridge.Attrs().Name, err)
		}
	}
	if err := h.LinkSetUp(port); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	return nil
}
