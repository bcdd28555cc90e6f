package hypervisor

import (
	"errors"
	"fmt"
	"sync"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"
)

// Event is a domain lifecycle event, named as libvirt names it, lower case:
// Type "started", "stopped", ...; Detail for "stopped": "shutdown",
// "destroyed", "crashed", "failed", ... The guest agent's lifecycle comes on
// the same stream, in order with the domain's: Type AgentEvent, Detail
// AgentConnected or AgentDisconnected.
type Event struct {
	Domain string
	Type   string
	Detail string
}

// Status is the state of a domain and libvirt's reason for it.
type Status struct {
	// State: "running", "blocked", "paused", "shutdown" (shutting down),
	// "shutoff", "crashed", "pmsuspended" or "nostate".
	State  string
	Reason string
}

// Info describes the libvirt behind a connection.
type Info struct {
	URI               string
	LibvirtVersion    string
	HypervisorVersion string
	// Driver is libvirt's name of the hypervisor driver: "QEMU" or "TEST".
	Driver string
	Arch   string
	// MachineTypes are the machine types of Arch, canonical and alias names.
	MachineTypes []string
	// DomainTypes are the domain types libvirt offers for Arch ("kvm", "qemu").
	DomainTypes []string
}

// Conn is an open libvirt connection with its lifecycle events.
type Conn struct {
	conn   *libvirt.Connect
	uri    string
	events chan Event
	cbIDs  []int

	// The callback runs on libvirt's event loop, which also drives QEMU's
	// monitor: it must never block, so events queue here without bound
	// and a goroutine feeds the channel.
	mu      sync.Mutex
	queue   []Event
	wake    chan struct{}
	closing chan struct{}
}

var eventLoop sync.Once

// startEventLoop runs libvirt's default event loop for the whole process; it
// must be registered before the first connection is opened.
func startEventLoop() error {
	var err error
	eventLoop.Do(func() {
		if err = libvirt.EventRegisterDefaultImpl(); err != nil {
			return
		}
		go func() {
			for libvirt.EventRunDefaultImpl() == nil {
			}
		}()
	})
	return err
}

// Open connects to uri and subscribes to the lifecycle events of all its
// domains. Events are delivered on Events(), in order and without loss.
func Open(uri string) (*Conn, error) {
	if err := startEventLoop(); err != nil {
		return nil, fmt.Errorf("start libvirt event loop: %w", err)
	}
	conn, err := libvirt.NewConnect(uri)
	if err != nil {
		return nil, fmt.Errorf("connect to libvirt %s: %w", uri, err)
	}
	c := &Conn{conn: conn, uri: uri, events: make(chan Event), wake: make(chan struct{}, 1), closing: make(chan struct{})}
	id, err := conn.DomainEventLifecycleRegister(nil, func(_ *libvirt.Connect, d *libvirt.Domain, e *libvirt.DomainEventLifecycle) {
		c.enqueue(d, eventTypeName(e.Event), eventDetailName(e))
	})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("register lifecycle events on %s: %w", uri, err)
	}
	c.cbIDs = append(c.cbIDs, id)
	id, err = conn.DomainEventAgentLifecycleRegister(nil, func(_ *libvirt.Connect, d *libvirt.Domain, e *libvirt.DomainEventAgentLifecycle) {
		c.enqueue(d, AgentEvent, agentStateName(e.State))
	})
	if err != nil {
		c.deregister()
		conn.Close()
		return nil, fmt.Errorf("register guest agent events on %s: %w", uri, err)
	}
	c.cbIDs = append(c.cbIDs, id)
	go c.deliver()
	return c, nil
}

// enqueue is the event callbacks' part: it runs on libvirt's event loop and
// must not block.
func (c *Conn) enqueue(d *libvirt.Domain, typ, detail string) {
	name, _ := d.GetName()
	c.mu.Lock()
	c.queue = append(c.queue, Event{Domain: name, Type: typ, Detail: detail})
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Conn) deregister() {
	for _, id := range c.cbIDs {
		_ = c.conn.DomainEventDeregister(id)
	}
}

// deliver feeds queued events to the channel until the connection closes.
func (c *Conn) deliver() {
	for {
		c.mu.Lock()
		pending := len(c.queue) > 0
		var next Event
		if pending {
			next = c.queue[0]
		}
		c.mu.Unlock()
		if !pending {
			select {
			case <-c.wake:
				continue
			case <-c.closing:
				return
			}
		}
		select {
		case c.events <- next:
			c.mu.Lock()
			c.queue = c.queue[1:]
			c.mu.Unlock()
		case <-c.closing:
			return
		}
	}
}

// Events delivers the lifecycle events of all domains of the connection.
func (c *Conn) Events() <-chan Event { return c.events }

// Close unsubscribes and closes the connection.
func (c *Conn) Close() error {
	c.deregister()
	close(c.closing)
	if _, err := c.conn.Close(); err != nil {
		return fmt.Errorf("close libvirt connection: %w", err)
	}
	return nil
}

// Info reports versions and capabilities.
func (c *Conn) Info() (Info, error) {
	info := Info{URI: c.uri}
	lv, err := c.conn.GetLibVersion()
	if err != nil {
		return info, fmt.Errorf("libvirt version: %w", err)
	}
	info.LibvirtVersion = version(lv)
	if hv, err := c.conn.GetVersion(); err == nil {
		info.HypervisorVersion = version(hv)
	}
	if info.Driver, err = c.conn.GetType(); err != nil {
		return info, fmt.Errorf("libvirt driver type: %w", err)
	}
	capsXML, err := c.conn.GetCapabilities()
	if err != nil {
		return info, fmt.Errorf("libvirt capabilities: %w", err)
	}
	var caps libvirtxml.Caps
	if err := caps.Unmarshal(capsXML); err != nil {
		return info, fmt.Errorf("parse libvirt capabilities: %w", err)
	}
	info.Arch = caps.Host.CPU.Arch
	for _, g := range caps.Guests {
		if g.Arch.Name != info.Arch || g.OSType != "hvm" {
			continue
		}
		for _, m := range g.Arch.Machines {
			info.MachineTypes = append(info.MachineTypes, m.Name)
		}
		for _, d := range g.Arch.Domains {
			info.DomainTypes = append(info.DomainTypes, d.Type)
		}
	}
	return info, nil
}

// version formats libvirt's major*1000000+minor*1000+micro.
func version(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v/1000000, v/1000%1000, v%1000)
}

// ErrNotFound is returned for a domain that is not defined.
var ErrNotFound = errors.New("domain not found")

// notFound marks libvirt's "no such domain" (ERR_NO_DOMAIN) as ErrNotFound,
// whether the lookup or the operation itself ran into it (the domain may go
// away in between). Other errors pass unchanged.
func notFound(err error) error {
	var lerr libvirt.Error
	if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_NO_DOMAIN {
		return markedError{err, ErrNotFound}
	}
	return err
}

// markedError reads as libvirt's error and matches both it and its mark
// (ErrNotFound, ErrInvalidConfig).
type markedError struct{ err, mark error }

func (e markedError) Error() string   { return e.err.Error() }
func (e markedError) Unwrap() []error { return []error{e.mark, e.err} }

// ErrInvalidConfig is returned when libvirt refuses a domain's definition
// itself: malformed or invalid XML, a configuration the hypervisor does not
// support. Defining or starting the same XML again fails the same way.
var ErrInvalidConfig = errors.New("invalid domain configuration")

// invalidConfigCodes are libvirt's errors about the definition rather than
// the host or the moment.
var invalidConfigCodes = map[libvirt.ErrorNumber]bool{
	libvirt.ERR_XML_ERROR:          true,
	libvirt.ERR_XML_DETAIL:         true,
	libvirt.ERR_XML_INVALID_SCHEMA: true,
	libvirt.ERR_CONFIG_UNSUPPORTED: true,
	libvirt.ERR_INVALID_ARG:        true,
	libvirt.ERR_NO_OS:              true,
	libvirt.ERR_NO_SOURCE:          true,
	libvirt.ERR_NO_TARGET:          true,
	libvirt.ERR_NO_NAME:            true,
	libvirt.ERR_INVALID_MAC:        true,
}

// invalidConfig marks libvirt's errors about the definition as
// ErrInvalidConfig; other errors pass unchanged.
func invalidConfig(err error) error {
	var lerr libvirt.Error
	if errors.As(err, &lerr) && invalidConfigCodes[lerr.Code] {
		return markedError{err, ErrInvalidConfig}
	}
	return err
}

func (c *Conn) lookup(name string) (*libvirt.Domain, error) {
	d, err := c.conn.LookupDomainByName(name)
	if err != nil {
		return nil, fmt.Errorf("look up domain %s: %w", name, notFound(err))
	}
	return d, nil
}

// do runs op on the named domain.
func (c *Conn) do(name, what string, op func(*libvirt.Domain) error) error {
	d, err := c.lookup(name)
	if err != nil {
		return err
	}
	defer d.Free()
	if err := op(d); err != nil {
		return fmt.Errorf("%s domain %s: %w", what, name, notFound(err))
	}
	return nil
}

// Define defines (or redefines) a persistent domain from its XML.
func (c *Conn) Define(xml string) error {
	d, err := c.conn.DomainDefineXML(xml)
	if err != nil {
		return fmt.Errorf("define domain: %w", invalidConfig(err))
	}
	return d.Free()
}

// Start boots a defined, shut off domain. libvirt checks parts of the
// definition only now (e.g. a machine type or device QEMU lacks): those
// errors are ErrInvalidConfig as Define's are.
func (c *Conn) Start(name string) error {
	return c.do(name, "start", func(d *libvirt.Domain) error {
		return invalidConfig(d.Create())
	})
}

// StartPaused boots a defined, shut off domain with its vCPUs paused
// (startStrategy Paused): QEMU runs, the guest does not until Unpause.
func (c *Conn) StartPaused(name string) error {
	return c.do(name, "start paused", func(d *libvirt.Domain) error {
		return invalidConfig(d.CreateWithFlags(libvirt.DOMAIN_START_PAUSED))
	})
}

// Shutdown presses the domain's ACPI power button.
func (c *Conn) Shutdown(name string) error {
	return c.do(name, "shut down", func(d *libvirt.Domain) error {
		err := d.ShutdownFlags(libvirt.DOMAIN_SHUTDOWN_ACPI_POWER_BTN)
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_INVALID_ARG {
			// The test driver knows no shutdown methods; its default is
			// the only one it has.
			return d.Shutdown()
		}
		return err
	})
}

// Reboot asks the guest to reboot by pressing the domain's ACPI power button.
// libvirt remembers the request: once the guest has powered off, it resets
// the domain instead of stopping it, so the domain never leaves running. A
// guest that ignores the button does not reboot; a later Shutdown cancels the
// request.
func (c *Conn) Reboot(name string) error {
	return c.do(name, "reboot", func(d *libvirt.Domain) error {
		err := d.Reboot(libvirt.DOMAIN_REBOOT_ACPI_POWER_BTN)
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_INVALID_ARG {
			// As for Shutdown: the test driver knows no reboot methods.
			return d.Reboot(libvirt.DOMAIN_REBOOT_DEFAULT)
		}
		return err
	})
}

// Destroy stops the domain at once.
func (c *Conn) Destroy(name string) error {
	return c.do(name, "destroy", (*libvirt.Domain).Destroy)
}

// Pause stops the domain's vCPUs.
func (c *Conn) Pause(name string) error {
	return c.do(name, "pause", (*libvirt.Domain).Suspend)
}

// Unpause resumes the domain's vCPUs.
func (c *Conn) Unpause(name string) error {
	return c.do(name, "unpause", (*libvirt.Domain).Resume)
}

// Status reports the domain's state.
func (c *Conn) Status(name string) (Status, error) {
	var s Status
	err := c.do(name, "get state of", func(d *libvirt.Domain) error {
		state, reason, err := d.GetState()
		if err != nil {
			return err
		}
		s = Status{State: stateName(state), Reason: reasonName(state, reason)}
		return nil
	})
	return s, err
}

// Domain returns the live definition of the domain, with what libvirt filled
// in (MAC addresses, PCI addresses, machine type).
func (c *Conn) Domain(name string) (*libvirtxml.Domain, error) {
	var dom libvirtxml.Domain
	err := c.do(name, "get XML of", func(d *libvirt.Domain) error {
		x, err := d.GetXMLDesc(0)
		if err != nil {
			return err
		}
		return dom.Unmarshal(x)
	})
	return &dom, err
}

// IsInvalidConfig reports whether err says libvirt refused the domain's
// definition: asking again with the same XML cannot succeed.
func IsInvalidConfig(err error) bool {
	return errors.Is(err, ErrInvalidConfig)
}

// IsNotFound reports whether err says the domain does not exist.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound)
}
