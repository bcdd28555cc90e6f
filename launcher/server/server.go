package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/accesscredential"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/guestagent"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/lease"
	"kubevirt.dev/virt/launcher/supervisor"
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
	// Type and Disks are filled in by the supervisor.
	Host domain.Host
	// FinalStateFile receives the domain as it ended, as JSON (protojson of
	// apiv1.Domain). Empty: not written.
	FinalStateFile string
	// RepressInterval is how often the ACPI power button is pressed again
	// while a shutdown waits. Zero: the supervisor's default.
	RepressInterval time.Duration
	// ResolvConf is the pod's resolver configuration, whose name servers
	// and search domains the guests' DHCP leases carry.
	ResolvConf string
	// Background is the context of the work that outlasts a call: the
	// DHCP servers. They stop when it is done.
	Background context.Context
	// AgentPollInterval and AgentTimeout: guestagent.Config's PollInterval
	// and Timeout.
	AgentPollInterval time.Duration
	AgentTimeout      time.Duration
	// PrivateDir is the pod's private directory (layout.PrivateDir): the
	// migration sockets are below it (layout.MigrationDir).
	PrivateDir string
	// MigrationTarget: the launcher runs a private libvirtd and receives
	// its guest by live migration (--migration-target).
	MigrationTarget bool
	// MigrationMonitorInterval: supervisor.Config's MonitorInterval.
	MigrationMonitorInterval time.Duration
}

// Server is the launcher's gRPC service.
type Server struct {
	apiv1.UnimplementedLauncherServer

	cfg    Config
	conn   *hypervisor.Conn
	events <-chan hypervisor.Event
	domain *supervisor.Supervisor
	leases *lease.Set
	agent  *guestagent.Reporter
	creds  *accesscredential.Propagator
}

// New returns a server for the domain of cfg.VMI on conn. Run must be running
// for it to see the domain's events.
func New(conn *hypervisor.Conn, cfg Config) *Server {
	return newServer(conn, conn, cfg)
}

// newServer is New with the guest agent asked through agent (a fake in
// tests: libvirt's test driver has no agent).
func newServer(conn *hypervisor.Conn, agent guestagent.Agent, cfg Config) *Server {
	if cfg.Background == nil {
		cfg.Background = context.Background()
	}
	s := &Server{cfg: cfg, conn: conn, events: conn.Events()}
	// The parts announce their changes to the supervisor, which completes
	// each with the domain as it is now and streams it; they hold no lock
	// of their own while they do. The supervisor calls them with its lock
	// held, never the other way round.
	s.domain = supervisor.New(conn, supervisor.Config{
		VMI:             cfg.VMI,
		DomainType:      cfg.Info.GetDomainType(),
		Disks:           cfg.Disks,
		Host:            cfg.Host,
		FinalStateFile:  cfg.FinalStateFile,
		RepressInterval: cfg.RepressInterval,
		MigrationTarget: cfg.MigrationTarget,
		MonitorInterval: cfg.MigrationMonitorInterval,
	}, supervisor.Hooks{
		Describe: s.describe,
		AgentConnected: func(ctx context.Context, connected bool) {
			s.agent.SetConnected(ctx, connected)
			s.creds.SetConnected(ctx, connected)
		},
	})
	s.leases = lease.New(lease.Config{
		ResolvConf: cfg.ResolvConf,
		Background: cfg.Background,
		OnAck: func(nic string) {
			s.domain.Changed(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_INTERFACES_CHANGED, Detail: "lease " + nic})
		},
	})
	s.agent = guestagent.New(agent, guestagent.Config{
		Domain:       s.domain.Name(),
		PollInterval: cfg.AgentPollInterval,
		Timeout:      cfg.AgentTimeout,
		OnChange: func() {
			s.domain.Changed(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_AGENT, Detail: "guest info"})
		},
	})
	s.creds = accesscredential.New(conn, accesscredential.Config{
		Domain: s.domain.Name(),
		Root:   cfg.Disks.Access,
	})
	return s
}

// describe adds to a picture of the domain what the leases and the agent
// know: called by the supervisor with its lock held.
func (s *Server) describe(d *apiv1.Domain) {
	for _, i := range d.Interfaces {
		if addr, ok := s.leases.Acked(i.GetName()); ok {
			i.DhcpAddress = addr.String()
		}
	}
	s.agent.Describe(d)
}

// Run follows the domain's lifecycle events until ctx ends or the domain has
// ended (Done is closed then).
func (s *Server) Run(ctx context.Context) { s.domain.Run(ctx, s.events) }

// DomainName is the libvirt name of the server's domain.
func (s *Server) DomainName() string { return s.domain.Name() }

// Done is closed once the domain has stopped after running.
func (s *Server) Done() <-chan struct{} { return s.domain.Done() }

// Final is the domain as it ended, or nil while it has not.
func (s *Server) Final() *apiv1.Domain { return s.domain.Final() }

// Started reports whether the domain was started.
func (s *Server) Started() bool { return s.domain.Started() }

// RequestShutdown starts a graceful shutdown (supervisor.RequestShutdown):
// SIGTERM's and Shutdown's.
func (s *Server) RequestShutdown(ctx context.Context, grace time.Duration) error {
	return s.domain.RequestShutdown(ctx, grace)
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
	vmi, err := s.vmi(req.GetVmiJson())
	if err != nil {
		return nil, err
	}
	s.creds.SetVMI(vmi)
	d, err := s.domain.Start(ctx, vmi, req.GetInterfaces(), s.serveLeases(ctx, vmi, req.GetInterfaces()))
	if err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.SyncResponse{Domain: d}, nil
}

// vmi parses and defaults a request's VMI and checks it is this launcher's.
func (s *Server) vmi(b []byte) (*virtv1.VirtualMachineInstance, error) {
	vmi := &virtv1.VirtualMachineInstance{}
	if err := json.Unmarshal(b, vmi); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "parse VMI: %v", err)
	}
	// The API server stores VMIs defaulted; defaulting again (idempotent)
	// fills in what a server older than this launcher did not know, so the
	// converter can rely on every default.
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	if ref := s.cfg.VMI; string(vmi.UID) != ref.Uid || vmi.Namespace != ref.Namespace || vmi.Name != ref.Name {
		return nil, status.Errorf(codes.InvalidArgument, "VMI %s/%s (uid %s) is not this launcher's %s/%s (uid %s)",
			vmi.Namespace, vmi.Name, vmi.UID, ref.Namespace, ref.Name, ref.Uid)
	}
	return vmi, nil
}

// serveLeases is the step that makes the NICs' DHCP servers listen before
// a guest can ask.
func (s *Server) serveLeases(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork) func() error {
	return func() error {
		if err := s.leases.Serve(ctx, vmi.Name, nics); err != nil {
			if errors.Is(err, lease.ErrInvalid) {
				return status.Error(codes.InvalidArgument, err.Error())
			}
			// A lease that cannot be served is a precondition the pod
			// does not meet.
			return status.Error(codes.FailedPrecondition, err.Error())
		}
		return nil
	}
}

// grpcError is the contract's code of a supervisor's error: the kinds that
// asking again cannot cure are permanent, anything else is libvirt failing
// (Internal, retryable).
func grpcError(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, supervisor.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, supervisor.ErrPrecondition):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, supervisor.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// Shutdown presses the power button and destroys the domain after the grace
// period.
func (s *Server) Shutdown(ctx context.Context, req *apiv1.ShutdownRequest) (*apiv1.ShutdownResponse, error) {
	grace := s.cfg.GracePeriod
	if req.GracePeriodSeconds != nil {
		grace = time.Duration(req.GetGracePeriodSeconds()) * time.Second
	}
	if err := s.domain.RequestShutdown(ctx, grace); err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &apiv1.ShutdownResponse{}, nil
}

// Kill destroys the domain at once.
func (s *Server) Kill(ctx context.Context, _ *apiv1.KillRequest) (*apiv1.KillResponse, error) {
	if err := s.domain.Kill(ctx); err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &apiv1.KillResponse{}, nil
}

// Pause stops the vCPUs.
func (s *Server) Pause(context.Context, *apiv1.PauseRequest) (*apiv1.PauseResponse, error) {
	if err := s.domain.Pause(); err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.PauseResponse{}, nil
}

// Unpause resumes the vCPUs.
func (s *Server) Unpause(context.Context, *apiv1.UnpauseRequest) (*apiv1.UnpauseResponse, error) {
	if err := s.domain.Unpause(); err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.UnpauseResponse{}, nil
}

// SoftReboot asks the guest to reboot itself (supervisor.SoftReboot).
func (s *Server) SoftReboot(ctx context.Context, _ *apiv1.SoftRebootRequest) (*apiv1.SoftRebootResponse, error) {
	if err := s.domain.SoftReboot(ctx); err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.SoftRebootResponse{}, nil
}

// GetDomain reports the domain.
func (s *Server) GetDomain(context.Context, *apiv1.GetDomainRequest) (*apiv1.GetDomainResponse, error) {
	return &apiv1.GetDomainResponse{Domain: s.domain.Domain()}, nil
}

// WatchDomain streams the current domain and then its events.
func (s *Server) WatchDomain(_ *apiv1.WatchDomainRequest, stream apiv1.Launcher_WatchDomainServer) error {
	current, events, stop := s.domain.Watch()
	defer stop()
	if err := stream.Send(current); err != nil {
		return err
	}
	if events == nil {
		return nil
	}
	for {
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case ev, ok := <-events:
			if !ok {
				if s.domain.Final() != nil {
					return nil
				}
				return status.Error(codes.ResourceExhausted, "watcher fell behind; watch again")
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}
