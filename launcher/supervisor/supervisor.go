package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// The kinds of the supervisor's errors that asking again cannot cure, as the
// contract tells them apart (apiv1.SyncErrorIsPermanent). Any other error is
// libvirt failing, and a later attempt may succeed.
var (
	// ErrInvalid: the VMI can never be this domain (it cannot be
	// converted, or libvirt refuses the definition).
	ErrInvalid = errors.New("invalid domain")
	// ErrPrecondition: the domain cannot do this now or ever in this
	// launcher (it ran and stopped, it is shutting down, it is not
	// running, a volume's file cannot be made ready).
	ErrPrecondition = errors.New("precondition failed")
)

// marked is err, whose message it keeps, marked as one of the kinds.
type marked struct {
	err  error
	kind error
}

func (e marked) Error() string   { return e.err.Error() }
func (e marked) Unwrap() []error { return []error{e.kind, e.err} }

func invalidf(format string, args ...any) error {
	return marked{fmt.Errorf(format, args...), ErrInvalid}
}

func preconditionf(format string, args ...any) error {
	return marked{fmt.Errorf(format, args...), ErrPrecondition}
}

// Config is what a Supervisor knows about its VMI and host.
type Config struct {
	VMI *apiv1.VMIRef
	// DomainType is libvirt's domain type (domain.TypeKVM, TypeQEMU,
	// TypeTest).
	DomainType string
	// Disks are where the volumes' files are.
	Disks disk.Dirs
	// Host carries the converter's paths (kernel, serial, firmware); its
	// Type, Disks and Interfaces are filled in by the supervisor.
	Host domain.Host
	// FinalStateFile receives the domain as it ended, as JSON (protojson of
	// apiv1.Domain). Empty: not written.
	FinalStateFile string
	// RepressInterval is how often the ACPI power button is pressed again
	// while a shutdown waits: a guest still booting misses the first press.
	// Zero: 5 s.
	RepressInterval time.Duration
	// MigrationTarget: the launcher receives its guest by live migration
	// (PrepareTarget) and never starts one of its own.
	MigrationTarget bool
	// MonitorInterval is how often a running migration's statistics are
	// read. Zero: 500 ms.
	MonitorInterval time.Duration
}

// Hooks are how the launcher's other parts take part in the domain's
// picture. They are called with the supervisor's lock held and must not
// call back into it. Nil hooks do nothing.
type Hooks struct {
	// Describe adds what others know to a picture of the domain: the
	// guest agent's report, the addresses the guests took.
	Describe func(*apiv1.Domain)
	// AgentConnected is told of libvirt's guest agent lifecycle events,
	// and of the agent's end with QEMU.
	AgentConnected func(ctx context.Context, connected bool)
}

// Supervisor owns the domain of one VMI.
type Supervisor struct {
	cfg   Config
	hooks Hooks
	conn  *hypervisor.Conn
	name  string

	mu        sync.Mutex
	started   bool
	final     *apiv1.Domain
	shutdown  bool
	deadline  time.Time
	destroyed bool
	// interfaces are the VMI's NICs with the MACs libvirt chose.
	interfaces []*apiv1.Interface
	changed    time.Time
	// migration is the last live migration, as source or target; job the
	// source's running one; incoming the VMI a target was prepared for.
	migration *apiv1.Migration
	job       *migrationJob
	incoming  *virtv1.VirtualMachineInstance
	// arrived is when an incoming migration's guest resumed here.
	arrived  time.Time
	watchers map[chan *apiv1.DomainEvent]struct{}
	done     chan struct{}
}

// New is the supervisor of cfg.VMI's domain on conn. Run must be running
// for it to see the domain's events.
func New(conn *hypervisor.Conn, cfg Config, hooks Hooks) *Supervisor {
	if cfg.RepressInterval <= 0 {
		cfg.RepressInterval = 5 * time.Second
	}
	if cfg.MonitorInterval <= 0 {
		cfg.MonitorInterval = 500 * time.Millisecond
	}
	if hooks.Describe == nil {
		hooks.Describe = func(*apiv1.Domain) {}
	}
	if hooks.AgentConnected == nil {
		hooks.AgentConnected = func(context.Context, bool) {}
	}
	return &Supervisor{
		cfg:      cfg,
		hooks:    hooks,
		conn:     conn,
		name:     domain.Name(cfg.VMI.Namespace, cfg.VMI.Name, types.UID(cfg.VMI.Uid)),
		watchers: map[chan *apiv1.DomainEvent]struct{}{},
		done:     make(chan struct{}),
		changed:  time.Now(),
	}
}

// Name is the libvirt name of the domain.
func (s *Supervisor) Name() string { return s.name }

// Done is closed once the domain has stopped after running.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// Final is the domain as it ended, or nil while it has not.
func (s *Supervisor) Final() *apiv1.Domain {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final
}

// Started reports whether the domain was started.
func (s *Supervisor) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Start defines the domain of vmi if it is missing and starts it if it is
// stopped; nics are the NICs the node prepared. beforeDefine runs first,
// once per Start that may still define the domain: the guest asks for its
// address as it boots, so its DHCP servers must listen before. A domain
// that runs is a success, whatever else failed on the way; the answer is
// the domain as it is then.
func (s *Supervisor) Start(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork, beforeDefine func() error) (*apiv1.Domain, error) {
	logger := klog.FromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.final != nil:
		return nil, preconditionf("domain %s already ran and stopped (%s)", s.name, s.final.StopReason)
	case s.shutdown:
		return nil, preconditionf("domain %s is shutting down", s.name)
	case s.cfg.MigrationTarget && !s.started:
		// Booting a guest here would run a second copy of the one the
		// source runs.
		return nil, preconditionf("domain %s is a migration target: its guest comes by live migration (PrepareMigrationTarget), not by Sync", s.name)
	}
	if !s.started && beforeDefine != nil {
		if err := beforeDefine(); err != nil {
			return nil, err
		}
	}
	st, err := s.conn.Status(s.name)
	if hypervisor.IsNotFound(err) {
		if err := s.define(vmi, nics); err != nil {
			return nil, err
		}
		st, err = s.conn.Status(s.name)
	}
	if err != nil {
		return nil, err
	}
	if st.State == "shutoff" || st.State == "crashed" {
		if s.started {
			return nil, preconditionf("domain %s already ran and stopped", s.name)
		}
		start := s.conn.Start
		if st := vmi.Spec.StartStrategy; st != nil && *st == virtv1.StartStrategyPaused {
			// The guest's vCPUs wait for an unpause; the node reports the
			// VMI Running, Ready False and Paused True meanwhile.
			start = s.conn.StartPaused
		}
		logger.Info("Starting domain", "domain", s.name, "paused", vmi.Spec.StartStrategy != nil)
		if err := start(s.name); err != nil {
			// The start may have got far enough: a domain that runs is
			// what was asked for.
			if now, serr := s.conn.Status(s.name); serr != nil || !live(now.State) {
				return nil, libvirtError(err)
			}
			logger.Error(err, "Starting the domain failed, but it runs", "domain", s.name)
		}
		s.started = true
		s.changed = time.Now()
	}
	if err := s.readInterfaces(vmi); err != nil {
		// The guest runs: failing now would only have the node give up on
		// it. The interfaces stay as last read (none at first: the node
		// then reports no MAC addresses).
		logger.Error(err, "Reading the domain's interfaces failed; answering without them", "domain", s.name)
	}
	return s.snapshotLocked(), nil
}

// live reports whether a domain in libvirt's state has a running QEMU.
func live(state string) bool {
	switch state {
	case "running", "blocked", "paused", "shutdown", "pmsuspended":
		return true
	}
	return false
}

// libvirtError marks a failed define or start ErrInvalid when libvirt
// refused the definition; otherwise libvirt failed and may not next time.
func libvirtError(err error) error {
	if hypervisor.IsInvalidConfig(err) {
		return marked{err, ErrInvalid}
	}
	return err
}

// define prepares the volumes' files and defines the domain.
func (s *Supervisor) define(vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork) error {
	disks, err := disk.Prepare(vmi, s.cfg.Disks)
	if errors.Is(err, disk.ErrNotReady) {
		// The launcher marks its pod ready only once every container
		// disk's container has written its record (disk.WaitForContainerDisks),
		// and the node syncs only a ready pod: a record missing now will
		// not come.
		return preconditionf("prepare volumes: %v (the pod became ready without it)", err)
	}
	if err != nil {
		return preconditionf("prepare volumes: %v", err)
	}
	host := s.cfg.Host
	host.Type = s.cfg.DomainType
	host.Disks = disks
	host.Interfaces = map[string]domain.Interface{}
	for _, nic := range nics {
		host.Interfaces[nic.GetName()] = domain.Interface{Tap: nic.GetTapDevice(), MAC: nic.GetMacAddress(), MTU: uint(nic.GetMtu())}
	}
	// The launcher links the kernel boot files (kernelboot.Link), the
	// initrd only when the image names one: a missing file means "not
	// given".
	for _, f := range []*string{&host.Kernel, &host.Initrd} {
		if _, err := os.Stat(*f); *f != "" && err != nil {
			*f = ""
		}
	}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return invalidf("convert VMI to domain: %v", err)
	}
	xml, err := d.Marshal()
	if err != nil {
		return invalidf("marshal domain %s: %v", s.name, err)
	}
	return libvirtError(s.conn.Define(xml))
}

// readInterfaces learns the NICs' MAC addresses libvirt chose.
func (s *Supervisor) readInterfaces(vmi *virtv1.VirtualMachineInstance) error {
	d, err := s.conn.Domain(s.name)
	if err != nil {
		return err
	}
	byAlias := map[string]string{}
	if d.Devices != nil {
		for _, i := range d.Devices.Interfaces {
			if i.Alias != nil && i.MAC != nil {
				byAlias[i.Alias.Name] = i.MAC.Address
			}
		}
	}
	s.interfaces = nil
	for _, i := range vmi.Spec.Domain.Devices.Interfaces {
		s.interfaces = append(s.interfaces, &apiv1.Interface{
			Name: i.Name, Model: i.Model, Mac: byAlias[domain.AliasPrefix+i.Name],
		})
	}
	return nil
}
