package hypervisor

import (
	"errors"
	"strings"
	"time"

	"libvirt.org/go/libvirt"
)

// The guest agent's events: Event.Type AgentEvent with Detail
// AgentConnected or AgentDisconnected, libvirt's agent lifecycle (the guest
// opened or closed its end of the agent's virtio-serial port).
const (
	AgentEvent        = "agent"
	AgentConnected    = "connected"
	AgentDisconnected = "disconnected"
)

func agentStateName(s libvirt.ConnectDomainEventAgentLifecycleState) string {
	switch s {
	case libvirt.CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_CONNECTED:
		return AgentConnected
	case libvirt.CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_DISCONNECTED:
		return AgentDisconnected
	}
	return "unknown"
}

// GuestInfo is what the guest agent reports about the guest.
type GuestInfo struct {
	OS       GuestOS
	Hostname string
	// Interfaces are the guest's network interfaces but its loopback, in
	// the agent's order.
	Interfaces []GuestInterface
}

// GuestOS is the guest's operating system: os-release and uname in a Linux
// guest (libvirt's os.* keys).
type GuestOS struct {
	ID, Name, PrettyName, Version, VersionID string
	KernelRelease, KernelVersion, Machine    string
}

// GuestInterface is a network interface as the guest sees it.
type GuestInterface struct {
	// Name in the guest, such as "enp1s0".
	Name string
	// MAC is the hardware address, lower case; empty for interfaces
	// without one.
	MAC string
	// Addresses are its IPv4 and IPv6 addresses without prefix length, in
	// the agent's order.
	Addresses []string
}

// guestInfoTypes are the reports GuestInfo asks for. Asked for by name,
// libvirt fails the whole call when the agent lacks one of the commands
// (guest-get-osinfo, guest-get-host-name, guest-network-get-interfaces:
// qemu-guest-agent 2.10 and later have them all) instead of silently
// leaving it out.
const guestInfoTypes = libvirt.DOMAIN_GUEST_INFO_OS | libvirt.DOMAIN_GUEST_INFO_HOSTNAME | libvirt.DOMAIN_GUEST_INFO_INTERFACES

// GuestInfo asks the domain's guest agent for the OS, host name and
// interfaces (virDomainGetGuestInfo). It waits for the agent as long as
// SetAgentTimeout allows; it fails at once when no agent is connected or
// the domain is not running (a paused guest cannot answer).
func (c *Conn) GuestInfo(name string) (GuestInfo, error) {
	var info GuestInfo
	err := c.do(name, "ask the guest agent of", func(d *libvirt.Domain) error {
		gi, err := d.GetGuestInfo(guestInfoTypes, 0)
		if err != nil {
			return err
		}
		info = guestInfo(gi)
		return nil
	})
	return info, err
}

// SetAgentTimeout bounds how long libvirt waits for the guest agent's
// answer to each command of the domain (libvirt's default is to wait
// forever). The setting lasts as long as the domain runs. Drivers without
// agents (the test driver) are not an error.
func (c *Conn) SetAgentTimeout(name string, timeout time.Duration) error {
	return c.do(name, "set the guest agent timeout of", func(d *libvirt.Domain) error {
		secs := int(timeout / time.Second)
		if secs < 1 {
			secs = 1
		}
		err := d.AgentSetResponseTimeout(secs, 0)
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_NO_SUPPORT {
			return nil
		}
		return err
	})
}

// guestInfo turns libvirt's report, already unpacked from its typed
// parameters, into plain values; the loopback interface is left out, as
// KubeVirt does.
func guestInfo(gi *libvirt.DomainGuestInfo) GuestInfo {
	var info GuestInfo
	if gi == nil {
		return info
	}
	if os := gi.OS; os != nil {
		info.OS = GuestOS{
			ID: os.ID, Name: os.Name, PrettyName: os.PrettyName, Version: os.Version, VersionID: os.VersionID,
			KernelRelease: os.KernelRelease, KernelVersion: os.KernelVersion, Machine: os.Machine,
		}
	}
	info.Hostname = gi.Hostname
	for _, i := range gi.Interfaces {
		if i.Name == "lo" {
			continue
		}
		// The guest's case may differ from libvirt's lower case, and
		// MAC addresses are compared.
		gif := GuestInterface{Name: i.Name, MAC: strings.ToLower(i.Hwaddr)}
		for _, a := range i.Addrs {
			if a.Addr != "" {
				gif.Addresses = append(gif.Addresses, a.Addr)
			}
		}
		info.Interfaces = append(info.Interfaces, gif)
	}
	return info
}

// SetAuthorizedSSHKeys replaces user's authorized_keys in the guest with
// keys, through the guest agent (virDomainAuthorizedSSHKeysSet).
func (c *Conn) SetAuthorizedSSHKeys(name, user string, keys []string) error {
	return c.do(name, "set SSH keys through the guest agent of", func(d *libvirt.Domain) error {
		return d.AuthorizedSSHKeysSet(user, keys, 0)
	})
}

// SetUserPassword sets user's password in the guest through the guest agent
// (virDomainSetUserPassword), in clear text as the agent takes it.
func (c *Conn) SetUserPassword(name, user, password string) error {
	return c.do(name, "set a password through the guest agent of", func(d *libvirt.Domain) error {
		return d.SetUserPassword(user, password, 0)
	})
}

// AgentCommand sends command, a guest agent command in its JSON form, to
// the guest agent of the domain and returns the agent's JSON answer; libvirt
// gives up after timeout (at least a second).
func (c *Conn) AgentCommand(name, command string, timeout time.Duration) (string, error) {
	var out string
	err := c.do(name, "send a guest agent command to", func(d *libvirt.Domain) error {
		secs := int(timeout / time.Second)
		if secs < 1 {
			secs = 1
		}
		var err error
		out, err = d.QemuAgentCommand(command, libvirt.DomainQemuAgentCommandTimeout(secs), 0)
		return err
	})
	return out, err
}
