package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/guestprobe"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/kernelboot"
	"kubevirt.dev/virt/launcher/kvm"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/launcher/logrotation"
	"kubevirt.dev/virt/launcher/server"
	"kubevirt.dev/virt/launcher/termination"
)

// logCheckInterval is how often the logs a guest fills are checked against
// their bound: a serial console writes at most a few MiB a second.
const logCheckInterval = time.Second

// daemonStartTimeout bounds a migration target's private libvirtd's start
// (its QEMU driver probes QEMU when the capabilities seed does not fit).
const daemonStartTimeout = 2 * time.Minute

// Run runs the launcher until its domain has ended, or until SIGTERM when no
// domain was started, and returns the process's exit status (see
// apiv1.ExitCode).
func (o *Options) Run(ctx context.Context) int {
	logger := klog.FromContext(ctx)
	code, err := o.run(ctx)
	if err != nil {
		logger.Error(err, "virt-launcher failed")
		termination.Write(err.Error())
	}
	return code
}

func (o *Options) run(ctx context.Context) (int, error) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	if err := o.Validate(); err != nil {
		return apiv1.ExitFailure, err
	}
	// Signals first: a SIGTERM while libvirt starts must not kill us
	// before a guest could be shut down.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)

	isReady := make(chan struct{})
	defer o.startWatchdog(ctx, isReady).Stop()

	socket := layout.LauncherSocket(o.PrivateDir)
	ready := layout.ReadyFile(o.PrivateDir)
	for _, stale := range []string{ready, socket} {
		if err := os.Remove(stale); err != nil && !os.IsNotExist(err) {
			return apiv1.ExitFailure, fmt.Errorf("remove stale %s: %w", stale, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(socket), 0o700); err != nil {
		return apiv1.ExitFailure, fmt.Errorf("create socket directory: %w", err)
	}
	// The migration sockets' directory, in every pod: a target's libvirtd
	// and incoming QEMU listen there, the node's proxy of a source does.
	// Only the pod's user (and the node's root) reaches into it.
	if err := os.MkdirAll(layout.MigrationDir(o.PrivateDir), 0o700); err != nil {
		return apiv1.ExitFailure, fmt.Errorf("create migration directory: %w", err)
	}
	var daemonExited <-chan struct{}
	var daemonSeeded *hypervisor.Seeded
	libvirtRoot := layout.LibvirtRoot(o.PrivateDir)
	qemuLogDir := filepath.Join(libvirtRoot, "log", "qemu")
	if o.MigrationTarget {
		d, err := hypervisor.StartDaemon(ctx, hypervisor.DaemonConfig{
			Root:                layout.LibvirtDaemonRoot(o.PrivateDir),
			Socket:              layout.MigrationLibvirtSocket(o.PrivateDir),
			CapabilitiesSeedDir: o.CapabilitiesSeedDir,
			Stderr:              os.Stderr,
		}, daemonStartTimeout)
		if err != nil {
			return apiv1.ExitFailure, err
		}
		defer d.Stop()
		daemonExited = d.Exited()
		daemonSeeded = &d.Seeded
		o.LibvirtURI = hypervisor.DaemonURI(d.Socket)
		qemuLogDir = hypervisor.DaemonQEMULogDir(d.Root)
		logger.Info("Private libvirtd started", "socket", d.Socket, "elapsed", time.Since(start))
		defer func() {
			if err := d.Err(); err != nil {
				logger.Error(err, "Private libvirtd")
			}
		}()
	}

	conn, info, err := o.openLibvirt(ctx, daemonSeeded)
	if err != nil {
		return apiv1.ExitFailure, err
	}
	defer conn.Close()
	logger.Info("libvirt ready", "uri", info.LibvirtUri, "libvirt", info.LibvirtVersion, "qemu", info.HypervisorVersion,
		"domainType", info.DomainType, "hardwareVirtualization", info.HardwareVirtualization.GetUsable(),
		"reason", info.HardwareVirtualization.GetReason(), "elapsed", time.Since(start))

	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	srv := server.New(conn, server.Config{
		VMI:         info.Vmi,
		GracePeriod: time.Duration(o.GracePeriodSeconds) * time.Second,
		Info:        info,
		Disks:       disk.Dirs{Disks: o.DisksDir, PVCRoot: o.PVCDir, PVCDevices: o.PVCDeviceDir, Secrets: o.SecretsDir, Config: o.ConfigDir, Access: o.AccessDir},
		Host: domain.Host{
			Kernel:       layout.Kernel(o.KernelBootDir),
			Initrd:       layout.Initrd(o.KernelBootDir),
			SerialSocket: layout.SerialSocket(o.PrivateDir),
			SerialLog:    layout.SerialLog(o.PrivateDir),
			VNCSocket:    layout.VNCSocket(o.PrivateDir),
			EFI:          domain.DebianOVMF,
		},
		FinalStateFile:  layout.FinalStateFile(o.PrivateDir),
		PrivateDir:      o.PrivateDir,
		MigrationTarget: o.MigrationTarget,
		// The pod's, written by the kubelet: cluster DNS and search path.
		ResolvConf: "/etc/resolv.conf",
		Background: runCtx,
	})
	info.DomainName = srv.DomainName()
	info.Features = server.Features(o.MigrationTarget)
	go srv.Run(runCtx)
	// The exec and guestAgentPing probes of the VMI, run by the kubelet
	// as exec probes of this container (virt-launcher --guest-probe).
	go func() {
		if err := guestprobe.Serve(runCtx, layout.GuestProbeSocket(o.PrivateDir), conn, srv.DomainName()); err != nil {
			logger.Error(err, "Serving the guest probes failed")
		}
	}()
	// The guest decides how much its console prints, and QEMU what its
	// devices warn about: both files are kept small.
	go logrotation.Keep(runCtx, logCheckInterval,
		logrotation.File{Path: layout.SerialLog(o.PrivateDir), Max: layout.SerialLogMaxBytes},
		logrotation.File{Path: filepath.Join(qemuLogDir, srv.DomainName()+".log"), Max: layout.SerialLogMaxBytes})

	lis, err := listenPrivate(socket)
	if err != nil {
		return apiv1.ExitFailure, err
	}
	defer os.Remove(socket)
	g := grpc.NewServer()
	apiv1.RegisterLauncherServer(g, srv)
	serveErr := make(chan error, 1)
	go func() { serveErr <- g.Serve(lis) }()
	defer g.Stop()
	logger.Info("Serving", "socket", socket, "domain", srv.DomainName(), "elapsed", time.Since(start))
	// The pod is ready, and the node starts the guest, once the launcher
	// serves its socket and every container disk is there: the node's
	// Sync then never waits for a volume.
	readyErr := make(chan error, 1)
	go func() { readyErr <- o.markReady(runCtx, ready, srv.DomainName()) }()
	defer os.Remove(ready)

	for {
		select {
		case err := <-serveErr:
			return apiv1.ExitFailure, fmt.Errorf("serve %s: %w", socket, err)
		case <-daemonExited:
			// The guest's libvirt is gone: nothing can drive it any more.
			return apiv1.ExitFailure, fmt.Errorf("the private libvirtd exited")
		case err := <-readyErr:
			if err != nil {
				return apiv1.ExitFailure, err
			}
			close(isReady)
			logger.Info("Ready", "containerDisks", o.ContainerDisks, "elapsed", time.Since(start))
		case sig := <-signals:
			if !srv.Started() || srv.Final() != nil {
				logger.Info("Signal without a running domain, exiting", "signal", sig)
				if missing, _ := disk.MissingRecords(o.DisksDir, o.ContainerDisks); len(missing) > 0 {
					// The pod was deleted, or a VMI probe's startup
					// probe gave up, while a container disk's image was
					// still not running: say so in the pod's status.
					termination.Write(fmt.Sprintf("ended before the containers of container disks %v wrote their records (image not pulled or container not started?)", missing))
				}
				return apiv1.ExitGuestShutdown, nil
			}
			logger.Info("Signal, shutting the domain down", "signal", sig, "gracePeriodSeconds", o.GracePeriodSeconds)
			if err := srv.RequestShutdown(ctx, time.Duration(o.GracePeriodSeconds)*time.Second); err != nil {
				logger.Error(err, "Shutdown failed")
			}
		case <-srv.Done():
			final := srv.Final()
			code := apiv1.ExitCode(final.StopReason)
			msg := fmt.Sprintf("domain %s ended: %s (%s)", final.Name, final.StopReason, final.Reason)
			logger.Info("Domain ended", "domain", final.Name, "stopReason", final.StopReason, "reason", final.Reason, "exitCode", code)
			termination.Write(msg)
			// Keep answering GetDomain for a node daemon that was between
			// connections; a second signal ends the wait.
			select {
			case <-time.After(o.Linger):
			case <-signals:
			}
			return code, nil
		}
	}
}

// startWatchdog bounds the launcher's start: unless isReady is closed
// within StartupTimeout, the process exits failed, its termination message
// saying what it still waited for. The kubelet's startup probe did this
// for every pod, one exec a second until the launcher was ready; the
// launcher needs none to know. A timer, not a context: a hang may be in a
// libvirt call that takes none.
func (o *Options) startWatchdog(ctx context.Context, isReady <-chan struct{}) *time.Timer {
	return time.AfterFunc(o.StartupTimeout, func() { o.giveUpUnlessReady(ctx, isReady) })
}

// giveUpUnlessReady ends the process failed unless isReady is closed.
func (o *Options) giveUpUnlessReady(ctx context.Context, isReady <-chan struct{}) {
	select {
	case <-isReady:
		return
	default:
	}
	msg := o.notReadyMessage()
	klog.FromContext(ctx).Error(nil, "Giving up", "reason", msg)
	termination.Write(msg)
	exit := o.exit
	if exit == nil {
		exit = os.Exit
	}
	exit(apiv1.ExitFailure)
}

// notReadyMessage says why the launcher is not ready after StartupTimeout:
// the volumes whose containers have not offered them, or libvirt.
func (o *Options) notReadyMessage() string {
	msg := fmt.Sprintf("not ready %s after its start", o.StartupTimeout)
	var waits []string
	if missing := kernelboot.Missing(o.KernelBootDir, o.KernelBootFiles); len(missing) > 0 {
		waits = append(waits, fmt.Sprintf("the kernel-boot container has not offered %v", missing))
	}
	if missing, _ := disk.MissingRecords(o.DisksDir, o.ContainerDisks); len(missing) > 0 {
		waits = append(waits, fmt.Sprintf("the containers of container disks %v have not written their records", missing))
	}
	if len(waits) == 0 {
		return msg + ": libvirt did not start (see the container's log)"
	}
	return msg + ": " + strings.Join(waits, "; ") + " (image not pulled or container not started?)"
}

// markReady writes the ready file, which the node waits for, once the
// kernel-boot files are linked (kernelboot.Link) and every container
// disk's record is there (disk.WaitForContainerDisks). The file holds the
// domain name.
func (o *Options) markReady(ctx context.Context, ready, domainName string) error {
	if err := kernelboot.Link(ctx, o.KernelBootDir, o.KernelBootFiles, disk.RecordInterval); err != nil {
		return err
	}
	if err := disk.WaitForContainerDisks(ctx, o.DisksDir, o.ContainerDisks, disk.RecordInterval); err != nil {
		return fmt.Errorf("wait for container disks %v: %w", o.ContainerDisks, err)
	}
	if err := os.WriteFile(ready, []byte(domainName+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", ready, err)
	}
	return nil
}

// openLibvirt connects to libvirt, preparing the embedded driver's root and
// seeding its capabilities cache from the image, and describes what it found.
// daemonSeeded is what StartDaemon seeded when libvirt is a private daemon.
func (o *Options) openLibvirt(ctx context.Context, daemonSeeded *hypervisor.Seeded) (*hypervisor.Conn, *apiv1.InfoResponse, error) {
	logger := klog.FromContext(ctx)
	uri := o.LibvirtURI
	if uri == "" {
		uri = hypervisor.EmbedURI(layout.LibvirtRoot(o.PrivateDir))
	}
	root := hypervisor.EmbedRoot(uri)
	var seeded hypervisor.Seeded
	if daemonSeeded != nil {
		seeded = *daemonSeeded
	}
	if root != "" {
		if err := checkQEMUUser(); err != nil {
			return nil, nil, err
		}
		if err := hypervisor.PrepareEmbedRoot(root); err != nil {
			return nil, nil, err
		}
		if o.CapabilitiesSeedDir != "" {
			var err error
			seeded, err = hypervisor.SeedCapabilities(o.CapabilitiesSeedDir, root)
			if err != nil {
				// Only slower: libvirt probes QEMU itself.
				logger.Error(err, "Seeding QEMU's capabilities failed", "seed", o.CapabilitiesSeedDir)
			}
			logger.Info("QEMU capabilities seeded", "seed", o.CapabilitiesSeedDir, "entries", seeded.Copied, "vouched", seeded.Vouched)
		}
	}
	conn, err := hypervisor.Open(uri)
	if err != nil {
		return nil, nil, err
	}
	t := time.Now()
	hv, err := conn.Info()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	// kept: the seeded entries libvirt took as they were; the others it
	// found stale and probed afresh.
	logger.Info("libvirt capabilities", "elapsed", time.Since(t), "seedKept", seeded.Kept(), "seeded", seeded.Copied)
	if hv.Driver == "QEMU" && len(hv.DomainTypes) == 0 {
		// libvirt logs why; usually QEMU could not be started at all.
		conn.Close()
		return nil, nil, fmt.Errorf("libvirt found no usable QEMU for %s (see its log above)", hv.Arch)
	}
	usable, why := kvm.Usable()
	if usable && !slices.Contains(hv.DomainTypes, domain.TypeKVM) {
		usable, why = false, "libvirt offers no kvm domains"
	}
	domainType := domain.TypeQEMU
	switch {
	case hv.Driver == "Test" || hv.Driver == "TEST":
		domainType = domain.TypeTest
	case usable:
		domainType = domain.TypeKVM
	}
	return conn, &apiv1.InfoResponse{
		LauncherVersion:        version(),
		LibvirtVersion:         hv.LibvirtVersion,
		HypervisorVersion:      hv.HypervisorVersion,
		LibvirtUri:             uri,
		DomainType:             domainType,
		HardwareVirtualization: &apiv1.HardwareVirtualization{Usable: usable, Reason: why},
		Arch:                   hv.Arch,
		MachineTypes:           hv.MachineTypes,
		Vmi:                    &apiv1.VMIRef{Namespace: o.VMINamespace, Name: o.VMIName, Uid: o.VMIUID},
	}, nil
}

// checkQEMUUser explains the embedded driver's most obscure failure: run as
// root, libvirt looks up its compiled-in QEMU user even though qemu.conf
// overrides it.
func checkQEMUUser() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if _, err := user.Lookup("libvirt-qemu"); err != nil {
		var unknown user.UnknownUserError
		if errors.As(err, &unknown) {
			return fmt.Errorf("running as root, libvirt's QEMU driver needs the system user libvirt-qemu in /etc/passwd (hack/install-deps.sh creates it; a launcher image must carry it)")
		}
	}
	return nil
}

// WriteCapabilitiesSeed probes QEMU through a fresh embedded root in a
// temporary directory and writes what libvirt cached to dir as a seed for
// the launchers of this image (hypervisor.WriteCapabilitiesSeed). The image
// build runs it as the launchers' user in the image's file system.
func WriteCapabilitiesSeed(ctx context.Context, dir string) error {
	tmp, err := os.MkdirTemp("", "virt-capabilities-seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "libvirt")
	if err := hypervisor.PrepareEmbedRoot(root); err != nil {
		return err
	}
	conn, err := hypervisor.Open(hypervisor.EmbedURI(root))
	if err != nil {
		return err
	}
	t := time.Now()
	hv, err := conn.Info()
	conn.Close()
	if err != nil {
		return err
	}
	if len(hv.DomainTypes) == 0 {
		return fmt.Errorf("libvirt found no usable QEMU for %s (see its log above)", hv.Arch)
	}
	n, err := hypervisor.WriteCapabilitiesSeed(root, dir)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("QEMU capabilities seed written", "dir", dir, "entries", n, "probe", time.Since(t))
	return nil
}

// listenPrivate serves a unix socket that appears at path already with mode
// 0600: it is bound under a temporary name, restricted, then renamed into
// place, so nobody who sees the path (the node, which waits for it) can find
// it open to others even for an instant.
func listenPrivate(path string) (net.Listener, error) {
	tmp := path + ".new"
	os.Remove(tmp)
	lis, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", tmp, err)
	}
	// The listener must not unlink its bound name on Close: after the
	// rename that name no longer exists, and path is removed by the caller.
	lis.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		lis.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("restrict %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		lis.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("publish %s: %w", path, err)
	}
	return lis, nil
}
