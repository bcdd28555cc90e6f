package fakelauncher

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/socket"
)

// Calls are the calls a launcher received.
type Calls struct {
	Info, Sync, GetDomain, Watch int
	// Shutdowns are the grace periods of the Shutdown calls (-1: unset).
	Shutdowns []int64
	Kill      int
	// Pause, Unpause and SoftReboot count the calls, answered or refused.
	Pause, Unpause, SoftReboot int
	// Screenshot counts the screenshots asked for.
	Screenshot int
	// NICs are the interfaces of the last Sync call.
	NICs []*apiv1.InterfaceNetwork
	// Prepares, Migrates and Cancels are the migration requests received
	// (migration.go).
	Prepares []*apiv1.PrepareMigrationTargetRequest
	Migrates []*apiv1.MigrateRequest
	Cancels  []*apiv1.CancelMigrationRequest
}

// Server is a fake launcher. Create it with Start.
type Server struct {
	dir    string
	ref    *apiv1.VMIRef
	grpc   *grpc.Server
	ln     net.Listener
	socket string

	mu       sync.Mutex
	domain   *apiv1.Domain
	watchers map[chan *apiv1.DomainEvent]struct{}
	syncErr  error
	// syncScript answers the next Sync calls, first to last; afterStart
	// answers them after starting the domain.
	syncScript []error
	afterStart error
	onShutdown func(grace int64)
	killDelay  time.Duration
	calls      Calls
	info       *apiv1.InfoResponse
	exited     bool
	clock      int64
	screenshot *screenshotAnswer
	// target: started with --migration-target (SetMigrationTarget).
	target bool

	apiv1.UnimplementedLauncherServer
}

// Start serves a launcher for vmi at layout.LauncherSocket(privateDir) and
// stops it when the test ends. The domain is ABSENT, of type qemu (software
// emulation) until SetInfo says otherwise.
func Start(t *testing.T, privateDir string, vmi *virtv1.VirtualMachineInstance) *Server {
	t.Helper()
	s := &Server{
		dir:      privateDir,
		ref:      &apiv1.VMIRef{Namespace: vmi.Namespace, Name: vmi.Name, Uid: string(vmi.UID)},
		socket:   layout.LauncherSocket(privateDir),
		watchers: map[chan *apiv1.DomainEvent]struct{}{},
	}
	name := fmt.Sprintf("%s_%s", vmi.Namespace, vmi.Name)
	s.info = &apiv1.InfoResponse{
		LauncherVersion: "fake", LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.0",
		DomainType:             "qemu",
		HardwareVirtualization: &apiv1.HardwareVirtualization{Usable: false, Reason: "no vmx or svm flag in /proc/cpuinfo"},
		Arch:                   "x86_64", Vmi: s.ref, DomainName: name,
	}
	s.domain = &apiv1.Domain{Name: name, State: apiv1.DomainState_DOMAIN_STATE_ABSENT, VmiUid: string(vmi.UID), SoftwareEmulation: true}
	if err := os.MkdirAll(filepath.Dir(s.socket), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := socket.Listen(s.socket)
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	s.grpc = grpc.NewServer()
	apiv1.RegisterLauncherServer(s.grpc, s)
	go func() { _ = s.grpc.Serve(ln) }()
	// As the launcher does once it serves and its volumes are there: the
	// node connects once it finds this file.
	if err := os.WriteFile(layout.ReadyFile(privateDir), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Exit)
	return s
}

// SetInfo replaces the Info answer, e.g. to claim another VMI.
func (s *Server) SetInfo(info *apiv1.InfoResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
	s.domain.SoftwareEmulation = info.GetDomainType() == "qemu"
}

// FailSync makes Sync answer err (nil: succeed again).
func (s *Server) FailSync(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncErr = err
}

// ScriptSync makes the next Sync calls answer errs in order, one each
// (nil: succeed as usual), before FailSync's error applies again: e.g. a
// launcher whose libvirt fails twice and then starts the domain.
func (s *Server) ScriptSync(errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncScript = append(s.syncScript, errs...)
}

// FailSyncAfterStart makes Sync define and start the domain as usual and
// then answer err (nil: succeed again): a launcher that failed after the
// guest started, or whose answer was lost.
func (s *Server) FailSyncAfterStart(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterStart = err
}

// OnShutdown runs f, without the lock, after each Shutdown call; f may
// move the domain (e.g. End("shutdown") for a guest that obeys ACPI).
func (s *Server) OnShutdown(f func(grace int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onShutdown = f
}

// Calls are the calls received so far.
func (s *Server) Calls() Calls {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	c.Shutdowns = append([]int64(nil), s.calls.Shutdowns...)
	c.Prepares = append([]*apiv1.PrepareMigrationTargetRequest(nil), s.calls.Prepares...)
	c.Migrates = append([]*apiv1.MigrateRequest(nil), s.calls.Migrates...)
	c.Cancels = append([]*apiv1.CancelMigrationRequest(nil), s.calls.Cancels...)
	return c
}

// Domain is the domain now.
func (s *Server) Domain() *apiv1.Domain {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.domain).(*apiv1.Domain)
}

// Event moves the domain to state (libvirt reason) and sends the event.
func (s *Server) Event(t apiv1.EventType, detail string, state apiv1.DomainState, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.domain.State, s.domain.Reason = state, reason
	s.broadcastLocked(t, detail)
}

// Agent connects the guest agent with the report given (as the launcher
// relays libvirt's guest info) and sends the AGENT event "guest info".
// Nothing is checked: a test plays a hostile guest with it.
func (s *Server) Agent(os *apiv1.GuestOSInfo, interfaces []*apiv1.GuestInterface) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.domain.AgentConnected = true
	s.domain.GuestOsInfo, s.domain.GuestInterfaces = os, interfaces
	s.broadcastLocked(apiv1.EventType_EVENT_TYPE_AGENT, "guest info")
}

// End stops the domain with libvirt's STOPPED detail ("shutdown",
// "destroyed", "crashed", "failed"), records the final state file as the
// launcher does, sends the event and ends every watch.
func (s *Server) End(detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_SHUTOFF, detail
	s.domain.StopReason = apiv1.StopReasonOfDetail(detail)
	data, err := apiv1.MarshalFinalState(s.domain)
	if err == nil {
		err = os.WriteFile(layout.FinalStateFile(s.dir), data, 0o644)
	}
	if err != nil {
		panic(fmt.Sprintf("fakelauncher: write final state: %v", err))
	}
	s.broadcastLocked(apiv1.EventType_EVENT_TYPE_STOPPED, detail)
	for w := range s.watchers {
		close(w)
		delete(s.watchers, w)
	}
}

// Terminate is the launcher's SIGTERM (its pod deleted or evicted): the
// shutdown is marked requested, as the launcher does before it presses the
// power button, and the domain ends with detail ("shutdown" for a guest
// that obeys, "destroyed" for one that outlived the grace period).
func (s *Server) Terminate(detail string) {
	s.mu.Lock()
	if !s.domain.ShutdownRequested {
		s.domain.ShutdownRequested = true
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_SHUTDOWN, "requested")
	}
	s.mu.Unlock()
	s.End(detail)
}

// Exit is the launcher process going away: streams break, the socket is
// removed. The final state file, if any, stays, as the pod's emptyDir does.
func (s *Server) Exit() {
	s.mu.Lock()
	if s.exited {
		s.mu.Unlock()
		return
	}
	s.exited = true
	s.mu.Unlock()
	s.grpc.Stop()
	// Stop closes the listener only if Serve got to it already.
	_ = s.ln.Close()
	_ = os.Remove(layout.ReadyFile(s.dir))
}

func (s *Server) tickLocked() {
	// Strictly increasing, like the launcher's state-change times.
	now := time.Now().UnixNano()
	if now <= s.clock {
		now = s.clock + 1
	}
	s.clock = now
	s.domain.StateChangeTimeUnixNano = now
}

func (s *Server) broadcastLocked(t apiv1.EventType, detail string) {
	s.tickLocked()
	ev := &apiv1.DomainEvent{Type: t, Detail: detail, Domain: proto.Clone(s.domain).(*apiv1.Domain), TimeUnixNano: time.Now().UnixNano()}
	for w := range s.watchers {
		select {
		case w <- proto.Clone(ev).(*apiv1.DomainEvent):
		default:
			close(w)
			delete(s.watchers, w)
		}
	}
}

// Info answers the configured info.
func (s *Server) Info(context.Context, *apiv1.InfoRequest) (*apiv1.InfoResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Info++
	return proto.Clone(s.info).(*apiv1.InfoResponse), nil
}

// Sync defines and starts the domain once, like the launcher.
func (s *Server) Sync(_ context.Context, req *apiv1.SyncRequest) (*apiv1.SyncResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Sync++
	vmi := &virtv1.VirtualMachineInstance{}
	if err := json.Unmarshal(req.GetVmiJson(), vmi); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "parse VMI: %v", err)
	}
	s.calls.NICs = req.GetInterfaces()
	nics := map[string]*apiv1.InterfaceNetwork{}
	for _, nic := range req.GetInterfaces() {
		nics[nic.GetName()] = nic
	}
	syncErr := s.syncErr
	if len(s.syncScript) > 0 {
		syncErr, s.syncScript = s.syncScript[0], s.syncScript[1:]
	}
	switch {
	case string(vmi.UID) != s.ref.Uid:
		return nil, status.Errorf(codes.InvalidArgument, "VMI uid %s is not this launcher's %s", vmi.UID, s.ref.Uid)
	case syncErr != nil:
		return nil, syncErr
	case len(nics) != len(vmi.Spec.Domain.Devices.Interfaces):
		// As the launcher, which refuses to convert an interface whose
		// tap was not prepared.
		return nil, status.Errorf(codes.InvalidArgument, "%d interfaces, %d prepared NICs", len(vmi.Spec.Domain.Devices.Interfaces), len(nics))
	case s.domain.StopReason != apiv1.StopReason_STOP_REASON_UNSPECIFIED:
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s already ran and stopped", s.domain.Name)
	case s.domain.ShutdownRequested:
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s is shutting down", s.domain.Name)
	}
	if s.domain.State == apiv1.DomainState_DOMAIN_STATE_ABSENT {
		s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_SHUTOFF, "unknown"
		s.domain.Uuid = string(vmi.UID)
		for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
			s.domain.Interfaces = append(s.domain.Interfaces, &apiv1.Interface{
				Name: iface.Name, Model: iface.Model, Mac: nics[iface.Name].GetMacAddress(),
			})
		}
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_DEFINED, "added")
		s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted"
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_STARTED, "booted")
	}
	if s.afterStart != nil {
		return nil, s.afterStart
	}
	return &apiv1.SyncResponse{Domain: proto.Clone(s.domain).(*apiv1.Domain)}, nil
}

// Shutdown records the grace period, marks the shutdown requested and runs
// the OnShutdown script.
func (s *Server) Shutdown(_ context.Context, req *apiv1.ShutdownRequest) (*apiv1.ShutdownResponse, error) {
	s.mu.Lock()
	grace := int64(-1)
	if req.GracePeriodSeconds != nil {
		grace = *req.GracePeriodSeconds
	}
	s.calls.Shutdowns = append(s.calls.Shutdowns, grace)
	running := s.domain.State != apiv1.DomainState_DOMAIN_STATE_ABSENT && s.domain.StopReason == apiv1.StopReason_STOP_REASON_UNSPECIFIED
	if running && !s.domain.ShutdownRequested {
		s.domain.ShutdownRequested = true
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_SHUTDOWN, "requested")
	}
	f := s.onShutdown
	s.mu.Unlock()
	if running && f != nil {
		f(grace)
	}
	return &apiv1.ShutdownResponse{}, nil
}

// SlowKill makes Kill take d before it destroys the domain, as libvirt
// does while QEMU takes its time to die.
func (s *Server) SlowKill(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killDelay = d
}

// Kill destroys the domain.
func (s *Server) Kill(context.Context, *apiv1.KillRequest) (*apiv1.KillResponse, error) {
	s.mu.Lock()
	s.calls.Kill++
	delay := s.killDelay
	s.mu.Unlock()
	time.Sleep(delay)
	s.mu.Lock()
	running := s.domain.State != apiv1.DomainState_DOMAIN_STATE_ABSENT && s.domain.StopReason == apiv1.StopReason_STOP_REASON_UNSPECIFIED
	s.mu.Unlock()
	if running {
		s.End("destroyed")
	}
	return &apiv1.KillResponse{}, nil
}

// Pause stops the vCPUs of a running domain, like the launcher: the domain
// goes PAUSED and watchers get SUSPENDED; a domain that is not running is
// refused with FailedPrecondition.
func (s *Server) Pause(context.Context, *apiv1.PauseRequest) (*apiv1.PauseResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Pause++
	if err := s.runningLocked(); err != nil {
		return nil, err
	}
	if s.domain.State != apiv1.DomainState_DOMAIN_STATE_PAUSED {
		s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_PAUSED, "user"
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_SUSPENDED, "paused")
	}
	return &apiv1.PauseResponse{}, nil
}

// Unpause resumes the vCPUs: RUNNING, RESUMED.
func (s *Server) Unpause(context.Context, *apiv1.UnpauseRequest) (*apiv1.UnpauseResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Unpause++
	if err := s.runningLocked(); err != nil {
		return nil, err
	}
	if s.domain.State == apiv1.DomainState_DOMAIN_STATE_PAUSED {
		s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_RUNNING, "unpaused"
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_RESUMED, "unpaused")
	}
	return &apiv1.UnpauseResponse{}, nil
}

// SoftReboot accepts a reboot of a running guest that is neither paused nor
// shutting down, like the launcher; the guest reboots without events here.
func (s *Server) SoftReboot(context.Context, *apiv1.SoftRebootRequest) (*apiv1.SoftRebootResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.SoftReboot++
	if err := s.runningLocked(); err != nil {
		return nil, err
	}
	if s.domain.State == apiv1.DomainState_DOMAIN_STATE_PAUSED || s.domain.ShutdownRequested {
		return nil, status.Errorf(codes.FailedPrecondition, "domain %s is not running (%s)", s.domain.Name, s.domain.State)
	}
	return &apiv1.SoftRebootResponse{}, nil
}

// SetScreenshot makes Screenshot send chunks, then end with err (nil: a
// complete picture). Without it, Screenshot is Unimplemented, as on a
// launcher older than the RPC.
func (s *Server) SetScreenshot(chunks []*apiv1.ScreenshotChunk, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.screenshot = &screenshotAnswer{chunks: chunks, err: err}
}

type screenshotAnswer struct {
	chunks []*apiv1.ScreenshotChunk
	err    error
}

// Screenshot sends what SetScreenshot said, of a running domain.
func (s *Server) Screenshot(_ *apiv1.ScreenshotRequest, stream apiv1.Launcher_ScreenshotServer) error {
	s.mu.Lock()
	s.calls.Screenshot++
	answer, err := s.screenshot, s.runningLocked()
	s.mu.Unlock()
	switch {
	case answer == nil:
		return status.Error(codes.Unimplemented, "method Screenshot not implemented")
	case err != nil:
		return err
	}
	for _, c := range answer.chunks {
		if err := stream.Send(c); err != nil {
			return err
		}
	}
	return answer.err
}

// runningLocked refuses calls that need a started domain that has not ended.
func (s *Server) runningLocked() error {
	if s.domain.State == apiv1.DomainState_DOMAIN_STATE_ABSENT || s.domain.StopReason != apiv1.StopReason_STOP_REASON_UNSPECIFIED {
		return status.Errorf(codes.FailedPrecondition, "domain %s is not running", s.domain.Name)
	}
	return nil
}

// GetDomain answers the domain.
func (s *Server) GetDomain(context.Context, *apiv1.GetDomainRequest) (*apiv1.GetDomainResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.GetDomain++
	return &apiv1.GetDomainResponse{Domain: proto.Clone(s.domain).(*apiv1.Domain)}, nil
}

// WatchDomain sends the current domain, then the events until End.
func (s *Server) WatchDomain(_ *apiv1.WatchDomainRequest, stream apiv1.Launcher_WatchDomainServer) error {
	s.mu.Lock()
	s.calls.Watch++
	current := &apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_CURRENT, Domain: proto.Clone(s.domain).(*apiv1.Domain), TimeUnixNano: time.Now().UnixNano()}
	var ch chan *apiv1.DomainEvent
	if s.domain.StopReason == apiv1.StopReason_STOP_REASON_UNSPECIFIED {
		ch = make(chan *apiv1.DomainEvent, 64)
		s.watchers[ch] = struct{}{}
	}
	s.mu.Unlock()
	if err := stream.Send(current); err != nil {
		return err
	}
	if ch == nil {
		return nil
	}
	defer func() {
		s.mu.Lock()
		if _, ok := s.watchers[ch]; ok {
			delete(s.watchers, ch)
			close(ch)
		}
		s.mu.Unlock()
	}()
	for {
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

// NICs are NICs for every interface of vmi, as a network binding would have
// prepared them, for tests that call Sync themselves.
func NICs(vmi *virtv1.VirtualMachineInstance) []*apiv1.InterfaceNetwork {
	var nics []*apiv1.InterfaceNetwork
	for i, iface := range vmi.Spec.Domain.Devices.Interfaces {
		nics = append(nics, &apiv1.InterfaceNetwork{
			Name: iface.Name, TapDevice: fmt.Sprintf("tap%d", i), Mtu: 1500,
			MacAddress: fmt.Sprintf("52:54:00:00:01:%02x", i),
		})
	}
	return nics
}
