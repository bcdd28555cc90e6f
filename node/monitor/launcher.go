package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// State is what the monitor knows of one launcher. Its messages are shared:
// read them, do not modify them.
type State struct {
	// Info is the launcher's Info, nil until its version check passed.
	Info *apiv1.InfoResponse
	// Domain is the newest domain the launcher reported (by WatchDomain or
	// an RPC's answer), nil before the first.
	Domain *apiv1.Domain
	// Err is why the launcher is not being watched right now; nil while a
	// WatchDomain stream is open.
	Err error
	// FailingSince is when the current run of failed attempts began; zero
	// while the launcher answers.
	FailingSince time.Time
}

// Ended reports whether the domain ran and stopped: the launcher has
// nothing more to report.
func (s State) Ended() bool {
	return Ended(s.Domain)
}

// Ended reports whether d is a domain that ran and stopped.
func Ended(d *apiv1.Domain) bool {
	return d.GetStopReason() != apiv1.StopReason_STOP_REASON_UNSPECIFIED
}

// LauncherSocketName is the launcher's socket below its pod's private
// directory.
var LauncherSocketName = filepath.Join(layout.SocketDirName, layout.LauncherSocketName)

// Launcher is the connection to one launcher.
type Launcher struct {
	target  Target
	cfg     Config
	clock   clock.PassiveClock
	conn    *grpc.ClientConn
	client  apiv1.LauncherClient
	changed func(string)
	cancel  context.CancelFunc
	done    chan struct{}

	mu    sync.Mutex
	state State
}

func newLauncher(ctx context.Context, t Target, cfg Config, c clock.PassiveClock, changed func(string)) (*Launcher, error) {
	conn, err := grpc.NewClient("passthrough:///launcher",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return t.PrivateDir.Dial(ctx, LauncherSocketName)
		}),
		// gRPC's own reconnect back-off grows to 2 minutes; a launcher on
		// this host is either there within seconds or gone for good.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 3 * time.Second},
			MinConnectTimeout: cfg.CallTimeout,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("launcher client for %s: %w", t.PrivateDir, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Launcher{
		target:  t,
		cfg:     cfg,
		clock:   c,
		conn:    conn,
		client:  apiv1.NewLauncherClient(conn),
		changed: changed,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "vmi", t.VMIKey, "pod", t.PodUID)
	go l.run(klog.NewContext(ctx, logger))
	return l, nil
}

// State is a snapshot of what is known of the launcher.
func (l *Launcher) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// Target is what the launcher was watched for.
func (l *Launcher) Target() Target { return l.target }

// Done is closed once the watch has stopped: the domain ended, or the
// launcher was forgotten.
func (l *Launcher) Done() <-chan struct{} { return l.done }

func (l *Launcher) close() {
	l.cancel()
	<-l.done
	_ = l.conn.Close()
}

// run waits for the launcher to be ready, then keeps a WatchDomain stream
// open until the domain ended.
func (l *Launcher) run(ctx context.Context) {
	defer close(l.done)
	if !l.waitReady(ctx) {
		return
	}
	logger := klog.FromContext(ctx)
	b := l.cfg.Backoff
	for {
		received, err := l.watch(ctx)
		if ctx.Err() != nil {
			return
		}
		if l.State().Ended() {
			logger.V(2).Info("Launcher reported the end of its domain; watch done")
			return
		}
		if received {
			b = l.cfg.Backoff
		}
		l.failed(err)
		delay := b.Step()
		logger.V(2).Info("Launcher watch broke, retrying", "err", err, "retryIn", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// readyFileLimit bounds the ready file's read: it holds a domain name.
const readyFileLimit = 4 << 10

// waitReady polls for the launcher's ready file (layout.ReadyFileName),
// which it writes once it serves its socket and its container disks and
// kernel-boot files are there: a Sync before that would find no volume.
// The VMI is handed over as soon as the launcher's container runs
// (vmipod.LauncherRunning). Until the file is there the launcher counts as
// failing (State.Err), so one that never gets ready is reported as
// unreachable; it exits by itself in the end (layout.StartupTimeout). It
// returns false once ctx ended.
func (l *Launcher) waitReady(ctx context.Context) bool {
	every := l.cfg.ReadyPoll
	if every <= 0 {
		every = DefaultReadyPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for reported := false; ; {
		_, err := l.target.PrivateDir.ReadFile(layout.ReadyFileName, readyFileLimit)
		if err == nil {
			return true
		}
		if !reported {
			// Once: each report wakes the VMI's sync.
			l.failed(fmt.Errorf("launcher not ready yet: %w", err))
			reported = true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// watch checks the launcher's version once and follows its WatchDomain
// stream until it breaks; it reports whether any message arrived.
func (l *Launcher) watch(ctx context.Context) (bool, error) {
	if l.State().Info == nil {
		if err := l.checkInfo(ctx); err != nil {
			return false, err
		}
	}
	stream, err := l.client.WatchDomain(ctx, &apiv1.WatchDomainRequest{})
	if err != nil {
		return false, fmt.Errorf("watch domain: %w", err)
	}
	received := false
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return received, errors.New("watch domain: the launcher ended the stream")
		}
		if err != nil {
			return received, fmt.Errorf("watch domain: %w", err)
		}
		if !received {
			received = true
			l.mu.Lock()
			l.state.Err, l.state.FailingSince = nil, time.Time{}
			l.mu.Unlock()
		}
		klog.FromContext(ctx).V(4).Info("Domain event", "type", ev.GetType(), "detail", ev.GetDetail(),
			"state", ev.GetDomain().GetState(), "stopReason", ev.GetDomain().GetStopReason())
		l.Observe(ev.GetDomain())
	}
}

// checkInfo is the version check: the launcher must implement Info (the
// first RPC of the contract) and run for the VMI this socket was found for.
// Fields are only ever added to the contract, so newer launchers pass.
func (l *Launcher) checkInfo(ctx context.Context) error {
	var info *apiv1.InfoResponse
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) (err error) {
		info, err = l.client.Info(ctx, &apiv1.InfoRequest{})
		return err
	})
	switch {
	case status.Code(err) == codes.Unimplemented:
		return fmt.Errorf("launcher does not implement virt.launcher.v1 Info: incompatible launcher image: %w", err)
	case err != nil:
		return fmt.Errorf("launcher info: %w", err)
	case info.GetVmi().GetUid() != string(l.target.VMIUID):
		return fmt.Errorf("launcher in %s runs VMI %s/%s (uid %s), not the expected uid %s",
			l.target.PrivateDir, info.GetVmi().GetNamespace(), info.GetVmi().GetName(), info.GetVmi().GetUid(), l.target.VMIUID)
	}
	klog.FromContext(ctx).Info("Connected to launcher", "launcherVersion", info.GetLauncherVersion(),
		"libvirt", info.GetLibvirtVersion(), "hypervisor", info.GetHypervisorVersion(), "domainType", info.GetDomainType(),
		"domain", info.GetDomainName())
	l.mu.Lock()
	l.state.Info = info
	l.mu.Unlock()
	return nil
}

func (l *Launcher) failed(err error) {
	l.mu.Lock()
	l.state.Err = err
	if l.state.FailingSince.IsZero() {
		l.state.FailingSince = l.clock.Now()
	}
	l.mu.Unlock()
	l.changed(l.target.VMIKey)
}

// Observe records d if it is newer than what is known, and reports the
// change. The launcher stamps each domain with the time of its last state
// change; an ended domain is never replaced.
func (l *Launcher) Observe(d *apiv1.Domain) {
	if d == nil {
		return
	}
	l.mu.Lock()
	cur := l.state.Domain
	newer := cur == nil || (!Ended(cur) && (Ended(d) || d.GetStateChangeTimeUnixNano() >= cur.GetStateChangeTimeUnixNano()))
	if newer {
		l.state.Domain = d
	}
	l.mu.Unlock()
	if newer && !proto.Equal(cur, d) {
		l.changed(l.target.VMIKey)
	}
}

// Sync asks the launcher to run vmi's domain, its NICs attached to nics,
// and returns the domain.
func (l *Launcher) Sync(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork) (*apiv1.Domain, error) {
	vmi = vmi.DeepCopy()
	vmi.APIVersion, vmi.Kind = virtv1.SchemeGroupVersion.String(), "VirtualMachineInstance"
	data, err := json.Marshal(vmi)
	if err != nil {
		return nil, fmt.Errorf("marshal VMI: %w", err)
	}
	var resp *apiv1.SyncResponse
	err = l.call(ctx, l.cfg.SyncTimeout, func(ctx context.Context) (err error) {
		resp, err = l.client.Sync(ctx, &apiv1.SyncRequest{VmiJson: data, Interfaces: nics})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sync domain: %w", err)
	}
	l.Observe(resp.GetDomain())
	return resp.GetDomain(), nil
}

// GetDomain asks the launcher for its domain as it is now, records it as
// Observe does and returns it: the watch may lag behind a call that just
// failed.
func (l *Launcher) GetDomain(ctx context.Context) (*apiv1.Domain, error) {
	var resp *apiv1.GetDomainResponse
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) (err error) {
		resp, err = l.client.GetDomain(ctx, &apiv1.GetDomainRequest{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get domain: %w", err)
	}
	l.Observe(resp.GetDomain())
	return resp.GetDomain(), nil
}

// Shutdown asks the launcher to shut the domain down within grace seconds.
func (l *Launcher) Shutdown(ctx context.Context, grace int64) error {
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) error {
		_, err := l.client.Shutdown(ctx, &apiv1.ShutdownRequest{GracePeriodSeconds: &grace})
		return err
	})
	if err != nil {
		return fmt.Errorf("shut domain down: %w", err)
	}
	return nil
}

// Pause asks the launcher to stop the domain's vCPUs. The new state
// arrives through the watch like any other.
func (l *Launcher) Pause(ctx context.Context) error {
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) error {
		_, err := l.client.Pause(ctx, &apiv1.PauseRequest{})
		return err
	})
	if err != nil {
		return fmt.Errorf("pause domain: %w", err)
	}
	return nil
}

// Unpause asks the launcher to resume the domain's vCPUs.
func (l *Launcher) Unpause(ctx context.Context) error {
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) error {
		_, err := l.client.Unpause(ctx, &apiv1.UnpauseRequest{})
		return err
	})
	if err != nil {
		return fmt.Errorf("unpause domain: %w", err)
	}
	return nil
}

// SoftReboot asks the launcher to have the guest reboot itself.
func (l *Launcher) SoftReboot(ctx context.Context) error {
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) error {
		_, err := l.client.SoftReboot(ctx, &apiv1.SoftRebootRequest{})
		return err
	})
	if err != nil {
		return fmt.Errorf("soft-reboot domain: %w", err)
	}
	return nil
}

// Screenshot asks the launcher for a PNG of the domain's first screen,
// streamed: the first message carries the picture's size. Its errors come
// from the stream's first Recv; ctx bounds the whole transfer.
func (l *Launcher) Screenshot(ctx context.Context) (apiv1.Launcher_ScreenshotClient, error) {
	return l.client.Screenshot(ctx, &apiv1.ScreenshotRequest{})
}

// call runs one RPC with a timeout, retrying while the launcher is
// Unavailable: the connection may be re-establishing after a hiccup. Other
// errors are answers and returned as they are.
func (l *Launcher) call(ctx context.Context, timeout time.Duration, rpc func(context.Context) error) error {
	b := l.cfg.Backoff
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		err := rpc(cctx)
		cancel()
		if status.Code(err) != codes.Unavailable || attempt >= l.cfg.CallRetries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(b.Step()):
		}
	}
}
