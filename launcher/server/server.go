package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/dhcp"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// Config is what a Server knows about its VMI and host.
type Config struct {
	VMI *apiv1.VMIRef
	// GracePeriod is the default of Shutdown and of SIGTERM.
	GracePeriod time.Duration
	// Info is what Info answers; its DomainType is the type of the domain.
	Info *apiv1.InfoResponse
	// Disks are where the volumes' files are.
	Disks disk.Dirs
	// Host carries the converter's paths (kernel, serial, firmware); its
	// Type and Disks are filled in by the server.
	Host domain.Host
	// FinalStateFile receives the domain as it ended, as JSON (protojson of
	// apiv1.Domain). Empty: not written.
	FinalStateFile string
	// RepressInterval is how often the ACPI power button is pressed again
	// while a shutdown waits: a guest still booting misses the first press.
	RepressInterval time.Duration
	// ResolvConf is the pod's resolver configuration, whose name servers
	// and search domains the guests' DHCP leases carry.
	ResolvConf string
	// Background is the context of the work that outlasts a call: the
	// DHCP servers. They stop when it is done.
	Background context.Context
	// VolumeWait bounds how long Sync answers Unavailable (retryable)
	// while a volume's file is not ready yet (disk.ErrNotReady: the
	// container of a containerDisk volume has not written its record),
	// counted from the first such answer; after it Sync answers
	// FailedPrecondition. The pod is ready only once every container
	// runs, so a record that does not follow within seconds will not.
	// Zero: DefaultVolumeWait.
	VolumeWait time.Duration
	// AgentPollInterval is how often the guest agent is asked for the
	// guest's OS, host name and interfaces while it is connected (and
	// once as it connects). Zero: DefaultAgentPollInterval.
	AgentPollInterval time.Duration
	// AgentTimeout bounds how long libvirt waits for each of the agent's
	// answers. Zero: DefaultAgentTimeout.
	AgentTimeout time.Duration
}

// DefaultVolumeWait is Config.VolumeWait's default.
const DefaultVolumeWait = 2 * time.Minute

// Server is the launcher's gRPC service and the owner of its domain.
type Server struct {
	apiv1.UnimplementedLauncherServer

	cfg   Config
	conn  *hypervisor.Conn
	agent guestAgent
	name  string

	mu         sync.Mutex
	started    bool
	final      *apiv1.Domain
	shutdown   bool
	deadline   time.Time
	destroyed  bool
	interfaces []*apiv1.Interface
	// dhcp are the DHCP servers of the NICs, by interface name.
	dhcp     map[string]*dhcp.Server
	changed  time.Time
	watchers map[chan *apiv1.DomainEvent]struct{}
	done     chan struct{}
	// volumesWaiting is when a Sync first found a volume not ready.
	volumesWaiting time.Time
	// The guest agent: whether it is connected, what it last reported,
	// and how to stop asking it (nil while nobody asks).
	agentConnected  bool
	guestOS         *apiv1.GuestOSInfo
	guestHostname   string
	guestInterfaces []*apiv1.GuestInterface
	stopPolling     context.CancelFunc
}

// New returns a server for the domain of cfg.VMI on conn. Run must be running
// for it to see the domain's events.
func New(conn *hypervisor.Conn, cfg Config) *Server {
	if cfg.RepressInterval <= 0 {
		cfg.RepressInterval = 5 * time.Second
	}
	if cfg.VolumeWait <= 0 {
		cfg.VolumeWait = DefaultVolumeWait
	}
	if cfg.Background == nil {
		cfg.Background = context.Background()
	}
	if cfg.AgentPollInterval <= 0 {
		cfg.AgentPollInterval = DefaultAgentPollInterval
	}
	if cfg.AgentTimeout <= 0 {
		cfg.AgentTimeout = DefaultAgentTimeout
	}
	return &Server{
		cfg:      cfg,
		conn:     conn,
		agent:    conn,
		name:     domain.Name(cfg.VMI.Namespace, cfg.VMI.Name, typesUID(cfg.VMI.Uid)),
		watchers: map[chan *apiv1.DomainEvent]struct{}{},
		dhcp:     map[string]*dhcp.Server{},
		done:     make(chan struct{}),
		changed:  time.Now(),
	}
}

// DomainName is the libvirt name of the server's domain.
func (s *Server) DomainName() string { return s.name }

// Done is closed once the domain has stopped after running.
func (s *Server) Done() <-chan struct{} { return s.done }

// Final is the domain as it ended, or nil while it has not.
func (s *Server) Final() *apiv1.Domain {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.final
}

// Started reports whether the domain was started.
func (s *Server) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Info reports versions and capabilities.
func (s *Server) Info(context.Context, *apiv1.InfoRequest) (*apiv1.InfoResponse, error) {
	return s.cfg.Info, nil
}

// Sync defines the domain if missing and starts it if stopped. Its errors
// follow the contract (apiv1.SyncErrorIsPermanent): InvalidArgument and
// FailedPrecondition when the VMI can never run here, Internal when libvirt
// failed and a later Sync may succeed. A domain that runs is a success,
// whatever else failed on the way.
func (s *Server) Sync(ctx context.Context, req *apiv1.SyncRequest) (*apiv1.SyncResponse, error) {
	logger := klog.FromContext(ctx)
	vmi := &virtv1.VirtualMachineInstance{}
	if err := json.Unmarshal(req.GetVmiJson(), vmi); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "parse VMI: %v", err)
	}
	// The API server stores VMIs defaulted; defaulting again (idempotent)
	// fills in what a server older than this launcher did not know, so the
	// converter can rely on every default.
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	if string(vmi.UID) != s.cfg.VMI.Uid || vmi.Namespace != s.cfg.VMI.Namespace || vmi.Name != s.cfg.VMI.Name {
		return nil, status.Errorf(codes.InvalidArgument, "VMI %s/%s (uid %s) is not this launcher's %s/%s (uid %s)",
			vmi.Namespace, vmi.Name, vmi.UID, s.cfg.VMI.Namespace, s.cfg.VMI.Name, s.cfg.VMI.Uid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.final != nil:
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s already ran and stopped (%s)", s.name, s.final.StopReason)
	case s.shutdown:
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s is shutting down", s.name)
	}
	if !s.started {
		// The guest asks for its address as it boots: its DHCP servers
		// listen before the domain is even defined, and a lease that
		// cannot be served defines nothing.
		if err := s.serveLeasesLocked(ctx, vmi, req.GetInterfaces()); err != nil {
			return nil, err
		}
	}
	st, err := s.conn.Status(s.name)
	if hypervisor.IsNotFound(err) {
		if err := s.define(vmi, req.GetInterfaces()); err != nil {
			return nil, err
		}
		st, err = s.conn.Status(s.name)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	if st.State == "shutoff" || st.State == "crashed" {
		if s.started {
			return nil, status.Errorf(codes.FailedPrecondition, "domain %s already ran and stopped", s.name)
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
				return nil, startError(err)
			}
			logger.Error(err, "Starting the domain failed, but it runs", "domain", s.name)
		}
		s.started = true
		s.changed = time.Now()
	}
	if err := s.readInterfaces(vmi); err != nil {
		// The guest runs: failing the Sync now would only have the node
		// give up on it. The interfaces stay as last read (none at first:
		// the node then reports no MAC addresses).
		logger.Error(err, "Reading the domain's interfaces failed; answering without them", "domain", s.name)
	}
	return &apiv1.SyncResponse{Domain: s.snapshotLocked()}, nil
}

// live reports whether a domain in libvirt's state has a running QEMU.
func live(state string) bool {
	switch state {
	case "running", "blocked", "paused", "shutdown", "pmsuspended":
		return true
	}
	return false
}

// startError is Sync's answer to a failed start: InvalidArgument when
// libvirt refused the definition, Internal (retryable) otherwise.
func startError(err error) error {
	if hypervisor.IsInvalidConfig(err) {
		return status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return status.Errorf(codes.Internal, "%v", err)
}

// define prepares the volumes' files and defines the domain. Its errors are
// Sync's answers: Unavailable while a volume's file is not ready yet (for
// at most VolumeWait), FailedPrecondition when a volume's file cannot be
// made ready, InvalidArgument when the VMI cannot be converted or libvirt
// refuses the definition, Internal when libvirt failed otherwise.
func (s *Server) define(vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork) error {
	disks, err := disk.Prepare(vmi, s.cfg.Disks)
	if errors.Is(err, disk.ErrNotReady) {
		if s.volumesWaiting.IsZero() {
			s.volumesWaiting = time.Now()
		}
		if waited := time.Since(s.volumesWaiting); waited < s.cfg.VolumeWait {
			return status.Errorf(codes.Unavailable, "prepare volumes (waited %v): %v", waited.Round(time.Millisecond), err)
		}
		return status.Errorf(codes.FailedPrecondition, "prepare volumes: gave up after %v: %v", s.cfg.VolumeWait, err)
	}
	if err != nil {
		return status.Errorf(codes.FailedPrecondition, "prepare volumes: %v", err)
	}
	host := s.cfg.Host
	host.Type = s.cfg.Info.GetDomainType()
	host.Disks = disks
	host.Interfaces = map[string]domain.Interface{}
	for _, nic := range nics {
		host.Interfaces[nic.GetName()] = domain.Interface{Tap: nic.GetTapDevice(), MAC: nic.GetMacAddress(), MTU: uint(nic.GetMtu())}
	}
	// An init container copies the kernel boot files, the initrd only when
	// the image names one: a missing file means "not given".
	for _, f := range []*string{&host.Kernel, &host.Initrd} {
		if _, err := os.Stat(*f); *f != "" && err != nil {
			*f = ""
		}
	}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "convert VMI to domain: %v", err)
	}
	xml, err := d.Marshal()
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "marshal domain %s: %v", s.name, err)
	}
	if err := s.conn.Define(xml); err != nil {
		return startError(err)
	}
	return nil
}

// serveLeasesLocked starts the DHCP server of every NIC that has a lease to
// offer and no server yet: on the binding's bridge, with the pod's DNS and
// the VMI's name as host name. The servers run for the launcher's life. A
// lease that cannot be served is a precondition the pod does not meet.
func (s *Server) serveLeasesLocked(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork) error {
	var dns []netip.Addr
	var search []string
	for _, nic := range nics {
		if nic.GetDhcp() == nil || s.dhcp[nic.GetName()] != nil {
			continue
		}
		if dns == nil && s.cfg.ResolvConf != "" {
			var err error
			if dns, search, err = dhcp.ReadResolvConf(s.cfg.ResolvConf); err != nil {
				// A guest without DNS still gets its address.
				klog.FromContext(ctx).Error(err, "Reading the pod's resolver configuration failed; the leases carry no DNS")
			}
		}
		cfg, err := dhcp.NewConfig(nic, dns, search, vmi.Name)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "interface %q: %v", nic.GetName(), err)
		}
		name := nic.GetName()
		cfg.OnAck = func(netip.Addr) { s.leaseTaken(name) }
		srv, err := dhcp.NewServer(cfg)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "interface %q: %v", name, err)
		}
		serve, err := srv.Listen(s.cfg.Background)
		if err != nil {
			return status.Errorf(codes.FailedPrecondition, "interface %q: %v", name, err)
		}
		s.dhcp[name] = srv
		logger := klog.LoggerWithValues(klog.FromContext(s.cfg.Background), "interface", name)
		go func() {
			if err := serve(); err != nil {
				logger.Error(err, "DHCP server stopped; the guest cannot renew its lease")
			}
		}()
	}
	return nil
}

// leaseTaken tells the watchers the guest of NIC name took its lease.
func (s *Server) leaseTaken(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final != nil {
		return
	}
	s.changed = time.Now()
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_INTERFACES_CHANGED, Detail: "lease " + name})
}

// readInterfaces learns the NICs' MAC addresses libvirt chose.
func (s *Server) readInterfaces(vmi *virtv1.VirtualMachineInstance) error {
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

// Shutdown presses the power button and destroys the domain after the grace
// period.
func (s *Server) Shutdown(ctx context.Context, req *apiv1.ShutdownRequest) (*apiv1.ShutdownResponse, error) {
	grace := s.cfg.GracePeriod
	if req.GracePeriodSeconds != nil {
		grace = time.Duration(req.GetGracePeriodSeconds()) * time.Second
	}
	if err := s.RequestShutdown(ctx, grace); err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &apiv1.ShutdownResponse{}, nil
}

// RequestShutdown starts a graceful shutdown: the ACPI power button now and
// every RepressInterval, and a destroy once grace has passed. A later request
// may shorten the grace period, never extend it. Without a running domain it
// does nothing.
func (s *Server) RequestShutdown(ctx context.Context, grace time.Duration) error {
	logger := klog.FromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.final != nil {
		return nil
	}
	deadline := time.Now().Add(grace)
	if s.shutdown && !deadline.Before(s.deadline) {
		return nil
	}
	first := !s.shutdown
	s.shutdown, s.deadline = true, deadline
	s.changed = time.Now()
	logger.Info("Shutting down domain", "domain", s.name, "gracePeriod", grace)
	if grace <= 0 {
		return s.destroyLocked(ctx, "grace period is zero")
	}
	if err := s.conn.Shutdown(s.name); err != nil {
		// A paused guest cannot react; the destroy at the deadline ends it.
		logger.Error(err, "ACPI shutdown failed, waiting for the grace period", "domain", s.name)
	}
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_SHUTDOWN, Detail: "requested"})
	if first {
		go s.enforce(ctx)
	}
	return nil
}

// enforce presses the power button again now and then and destroys the
// domain at the deadline, until the domain has ended.
func (s *Server) enforce(ctx context.Context) {
	repress := time.NewTicker(s.cfg.RepressInterval)
	defer repress.Stop()
	for {
		s.mu.Lock()
		wait := time.Until(s.deadline)
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		case <-repress.C:
			if err := s.conn.Shutdown(s.name); err != nil {
				klog.FromContext(ctx).V(2).Info("ACPI shutdown repeat failed", "domain", s.name, "err", err)
			}
		case <-time.After(wait):
			s.mu.Lock()
			if time.Now().Before(s.deadline) {
				// The deadline moved while waiting: wait for the new one.
				s.mu.Unlock()
				continue
			}
			err := s.destroyLocked(ctx, "grace period expired")
			s.mu.Unlock()
			if err != nil {
				klog.FromContext(ctx).Error(err, "Destroy after grace period failed", "domain", s.name)
			}
			return
		}
	}
}

func (s *Server) destroyLocked(ctx context.Context, why string) error {
	if s.final != nil || s.destroyed {
		return nil
	}
	klog.FromContext(ctx).Info("Destroying domain", "domain", s.name, "reason", why)
	s.destroyed = true
	if err := s.conn.Destroy(s.name); err != nil {
		s.destroyed = false
		return err
	}
	return nil
}

// Kill destroys the domain at once.
func (s *Server) Kill(ctx context.Context, _ *apiv1.KillRequest) (*apiv1.KillResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return &apiv1.KillResponse{}, nil
	}
	if err := s.destroyLocked(ctx, "kill requested"); err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &apiv1.KillResponse{}, nil
}

// Pause stops the vCPUs.
func (s *Server) Pause(context.Context, *apiv1.PauseRequest) (*apiv1.PauseResponse, error) {
	if err := s.whileRunning(s.conn.Pause); err != nil {
		return nil, err
	}
	return &apiv1.PauseResponse{}, nil
}

// Unpause resumes the vCPUs.
func (s *Server) Unpause(context.Context, *apiv1.UnpauseRequest) (*apiv1.UnpauseResponse, error) {
	if err := s.whileRunning(s.conn.Unpause); err != nil {
		return nil, err
	}
	return &apiv1.UnpauseResponse{}, nil
}

// SoftReboot asks the guest to reboot itself (ACPI power button; libvirt
// resets the domain once the guest powered off). KubeVirt asks a connected
// guest agent first; this launcher does not (yet).
func (s *Server) SoftReboot(ctx context.Context, _ *apiv1.SoftRebootRequest) (*apiv1.SoftRebootResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.final != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s is not running", s.name)
	}
	if s.shutdown {
		// The reboot would turn the shutdown's power-off into a reset.
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s is shutting down", s.name)
	}
	st, err := s.conn.Status(s.name)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	if st.State != "running" && st.State != "blocked" {
		// A paused guest cannot react to the power button.
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s is not running (%s, %s)", s.name, st.State, st.Reason)
	}
	klog.FromContext(ctx).Info("Rebooting domain", "domain", s.name, "method", "acpi")
	if err := s.conn.Reboot(s.name); err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &apiv1.SoftRebootResponse{}, nil
}

func (s *Server) whileRunning(op func(string) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.final != nil {
		return status.Errorf(codes.FailedPrecondition, "domain %s is not running", s.name)
	}
	if err := op(s.name); err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	return nil
}

// GetDomain reports the domain.
func (s *Server) GetDomain(context.Context, *apiv1.GetDomainRequest) (*apiv1.GetDomainResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &apiv1.GetDomainResponse{Domain: s.snapshotLocked()}, nil
}

// writeFinal records the final domain next to the socket, so a node daemon
// that was not connected when the guest ended still learns how.
func writeFinal(path string, d *apiv1.Domain) error {
	if path == "" {
		return nil
	}
	data, err := apiv1.MarshalFinalState(d)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write final state: %w", err)
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write final state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("write final state: %w", err), os.Remove(tmp))
	}
	return nil
}
