package domain

import "libvirt.org/go/libvirtxml"

// GuestAgentChannel is the name of the virtio-serial port qemu-guest-agent
// opens in the guest (its default, and KubeVirt's).
const GuestAgentChannel = "org.qemu.guest_agent.0"

// setGuestAgentChannel adds the guest agent's virtio-serial channel. Every
// domain has it, as in KubeVirt: whether a guest runs an agent is the
// guest's business, and an unused port costs nothing. libvirt picks the
// socket in its own root (no source path), so nothing outside the launcher
// can talk to the agent; libvirt reports the port's state (connected or
// not) as agent lifecycle events.
func setGuestAgentChannel(d *libvirtxml.Domain) {
	d.Devices.Channels = append(d.Devices.Channels, libvirtxml.DomainChannel{
		Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{}},
		Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: GuestAgentChannel}},
	})
}
