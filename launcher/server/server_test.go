package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/guestagent"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/supervisor"
)

// The tests run the real server over a real unix socket against libvirt's
// in-process test driver. The driver's state is shared by the whole process,
// so every test uses a VMI of its own UID.

type fixture struct {
	srv    *Server
	client apiv1.LauncherClient
	vmi    *virtv1.VirtualMachineInstance
	dir    string
	// events delivers events the test driver never sends (the guest
	// agent's) to the server, in order with libvirt's own.
	events chan hypervisor.Event
}

// newFixture serves a fresh VMI's launcher; opts change the server's
// Config before it starts.
func newFixture(t *testing.T, opts ...func(*Config)) *fixture {
	t.Helper()
	return newAgentFixture(t, nil, opts...)
}

// newAgentFixture is newFixture whose guest agent is agent (nil: libvirt's).
func newAgentFixture(t *testing.T, agent guestagent.Agent, opts ...func(*Config)) *fixture {
	t.Helper()
	conn, err := hypervisor.Open("test:///default")
	if err != nil {
		t.Fatalf("open libvirt test driver: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	dir := t.TempDir()
	uid := uuid.NewUUID()
	vmi := &virtv1.VirtualMachineInstance{
		TypeMeta:   metav1.TypeMeta{APIVersion: "virtualization.kubevirt.io/v1", Kind: "VirtualMachineInstance"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: uid},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{
				Resources: virtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
				Devices:   virtv1.Devices{Disks: []virtv1.Disk{{Name: "scratch"}, {Name: "ci"}}},
			},
			Volumes: []virtv1.Volume{
				{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}},
				{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
			},
		},
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	cfg := Config{
		VMI:         &apiv1.VMIRef{Namespace: "ns", Name: "vm", Uid: string(uid)},
		GracePeriod: time.Second,
		Info:        &apiv1.InfoResponse{DomainType: domain.TypeTest, LauncherVersion: "test"},
		Disks:       disk.Dirs{Disks: filepath.Join(dir, "disks"), PVCRoot: filepath.Join(dir, "pvcs")},
		Host: domain.Host{
			SerialSocket: filepath.Join(dir, "serial0.sock"), SerialLog: filepath.Join(dir, "serial0.log"),
			VNCSocket: filepath.Join(dir, "vnc.sock"),
		},
		FinalStateFile: filepath.Join(dir, "final.json"),
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	if agent == nil {
		agent = conn
	}
	srv := newServer(conn, agent, cfg)
	f := &fixture{srv: srv, vmi: vmi, dir: dir, events: make(chan hypervisor.Event)}
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	// libvirt's events, and those the test delivers that the test driver
	// never sends (the guest agent's).
	events := make(chan hypervisor.Event)
	go func() {
		for {
			var e hypervisor.Event
			select {
			case <-ctx.Done():
				return
			case e = <-conn.Events():
			case e = <-f.events:
			}
			select {
			case <-ctx.Done():
				return
			case events <- e:
			}
		}
	}()
	srv.events = events
	go srv.Run(ctx)

	sock := filepath.Join(dir, "launcher.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	apiv1.RegisterLauncherServer(g, srv)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	f.client = apiv1.NewLauncherClient(cc)
	return f
}

func (f *fixture) sync(t *testing.T) (*apiv1.Domain, error) {
	t.Helper()
	return f.syncNICs(t, nics(f.vmi))
}

func (f *fixture) syncNICs(t *testing.T, nics []*apiv1.InterfaceNetwork) (*apiv1.Domain, error) {
	t.Helper()
	b, err := json.Marshal(f.vmi)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.Sync(t.Context(), &apiv1.SyncRequest{VmiJson: b, Interfaces: nics})
	return resp.GetDomain(), err
}

// nics are the NICs a binding would have prepared for vmi, without leases
// (the test driver opens no tap and runs no guest to ask for one).
func nics(vmi *virtv1.VirtualMachineInstance) []*apiv1.InterfaceNetwork {
	var out []*apiv1.InterfaceNetwork
	for i, iface := range vmi.Spec.Domain.Devices.Interfaces {
		out = append(out, &apiv1.InterfaceNetwork{Name: iface.Name, TapDevice: fmt.Sprintf("tap%d", i), MacAddress: fmt.Sprintf("52:54:00:00:00:%02x", i+1), Mtu: 1500})
	}
	return out
}

// A NIC the handler did not prepare, or a lease that cannot be served, is
// a VMI this launcher can never run: InvalidArgument, nothing defined.
func TestSyncRefusesUnpreparedNICs(t *testing.T) {
	for name, bad := range map[string][]*apiv1.InterfaceNetwork{
		"no NIC": nil,
		"bad lease": {{Name: "default", TapDevice: "tap0", MacAddress: "52:54:00:00:00:01",
			Dhcp: &apiv1.DHCPLease{ServerInterface: "k6t-eth0", ServerAddress: "198.19.255.1", Address: "not-an-address"}}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if _, err := f.syncNICs(t, bad); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("Sync error = %v, want InvalidArgument", err)
			}
			if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
				t.Errorf("after a refused Sync the domain is %v, want ABSENT", d)
			}
		})
	}
}

func (f *fixture) state(t *testing.T) *apiv1.Domain {
	t.Helper()
	resp, err := f.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
	if err != nil {
		t.Fatalf("GetDomain: %v", err)
	}
	return resp.GetDomain()
}

// waitDone waits for the domain to end.
func (f *fixture) waitDone(t *testing.T) *apiv1.Domain {
	t.Helper()
	select {
	case <-f.srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("domain did not end within 10s; it is %v", f.state(t))
	}
	return f.srv.Final()
}

func TestSyncDefinesStartsAndIsIdempotent(t *testing.T) {
	f := newFixture(t)
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
		t.Fatalf("before Sync: state %v, want ABSENT", d.State)
	}
	d, err := f.sync(t)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING || d.Name != f.srv.DomainName() || d.VmiUid != string(f.vmi.UID) {
		t.Fatalf("after Sync: %v", d)
	}
	if d.SoftwareEmulation {
		t.Errorf("test driver domain reported as software emulation")
	}
	if len(d.Interfaces) != 1 || d.Interfaces[0].Name != "default" || d.Interfaces[0].Mac == "" {
		t.Errorf("interfaces = %v, want the default pod interface with a MAC", d.Interfaces)
	}
	for _, p := range []string{"disks/scratch/disk.img", "disks/ci/nocloud.iso"} {
		if _, err := os.Stat(filepath.Join(f.dir, p)); err != nil {
			t.Errorf("Sync did not prepare %s: %v", p, err)
		}
	}
	d2, err := f.sync(t)
	if err != nil {
		t.Fatalf("second Sync: %v", err)
	}
	if d2.State != apiv1.DomainState_DOMAIN_STATE_RUNNING || d2.Uuid != d.Uuid {
		t.Errorf("second Sync changed the domain: %v -> %v", d, d2)
	}
}

func TestSyncRefusesAnotherVMI(t *testing.T) {
	f := newFixture(t)
	f.vmi.UID = types.UID("not-mine")
	_, err := f.sync(t)
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Sync of another VMI: %v, want InvalidArgument", err)
	}
}

func TestPauseUnpause(t *testing.T) {
	f := newFixture(t)
	if _, err := f.client.Pause(t.Context(), &apiv1.PauseRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Pause before Sync: %v, want FailedPrecondition", err)
	}
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Pause(t.Context(), &apiv1.PauseRequest{}); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_PAUSED || d.Reason != "user" {
		t.Errorf("after Pause: %v %q", d.State, d.Reason)
	}
	if _, err := f.client.Unpause(t.Context(), &apiv1.UnpauseRequest{}); err != nil {
		t.Fatalf("Unpause: %v", err)
	}
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Errorf("after Unpause: %v", d.State)
	}
}

// startStrategy Paused asks libvirt for a paused start. libvirt's test
// driver cannot start paused and says so, which is how this test sees the
// request; test/integration/launcher starts a real guest paused.
func TestSyncStartsPausedForStartStrategyPaused(t *testing.T) {
	f := newFixture(t)
	paused := virtv1.StartStrategyPaused
	f.vmi.Spec.StartStrategy = &paused
	_, err := f.sync(t)
	if err == nil || !strings.Contains(err.Error(), "start paused") {
		t.Fatalf("Sync of a VMI with startStrategy Paused: %v; want the test driver's refusal of a paused start", err)
	}
	f.vmi.Spec.StartStrategy = nil
	if d, err := f.sync(t); err != nil || d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Fatalf("Sync without startStrategy: %v, %v; want RUNNING", d.GetState(), err)
	}
}

func TestSoftReboot(t *testing.T) {
	f := newFixture(t)
	if _, err := f.client.SoftReboot(t.Context(), &apiv1.SoftRebootRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("SoftReboot before Sync: %v, want FailedPrecondition", err)
	}
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Pause(t.Context(), &apiv1.PauseRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.SoftReboot(t.Context(), &apiv1.SoftRebootRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("SoftReboot of a paused domain: %v, want FailedPrecondition", err)
	}
	if _, err := f.client.Unpause(t.Context(), &apiv1.UnpauseRequest{}); err != nil {
		t.Fatal(err)
	}
	// The test driver reboots at once, without events. A reboot is no end:
	// the domain keeps running and the launcher keeps serving it.
	if _, err := f.client.SoftReboot(t.Context(), &apiv1.SoftRebootRequest{}); err != nil {
		t.Fatalf("SoftReboot: %v", err)
	}
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING || d.StopReason != apiv1.StopReason_STOP_REASON_UNSPECIFIED {
		t.Errorf("after SoftReboot: %v", d)
	}
	select {
	case <-f.srv.Done():
		t.Errorf("the server took the reboot for the domain's end: %v", f.srv.Final())
	default:
	}

	if _, err := f.client.Shutdown(t.Context(), &apiv1.ShutdownRequest{}); err != nil {
		t.Fatal(err)
	}
	f.waitDone(t)
	if _, err := f.client.SoftReboot(t.Context(), &apiv1.SoftRebootRequest{}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("SoftReboot after the end: %v, want FailedPrecondition", err)
	}
}

func TestShutdownEndsDomainAndRecordsIt(t *testing.T) {
	f := newFixture(t)
	watch, err := f.client.WatchDomain(t.Context(), &apiv1.WatchDomainRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := watch.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if first.Type != apiv1.EventType_EVENT_TYPE_CURRENT || first.Domain.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
		t.Fatalf("first watch message = %v, want CURRENT with ABSENT", first)
	}
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	// The test driver powers off at once on the power button.
	if _, err := f.client.Shutdown(t.Context(), &apiv1.ShutdownRequest{}); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	final := f.waitDone(t)
	if final.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN || final.State != apiv1.DomainState_DOMAIN_STATE_SHUTOFF {
		t.Errorf("final = %v, want SHUTOFF by GUEST_SHUTDOWN", final)
	}
	if !final.ShutdownRequested {
		t.Errorf("final domain does not say a shutdown was requested")
	}
	var types []string
	for {
		ev, err := watch.Recv()
		if err != nil {
			break // the stream ends after the final event
		}
		types = append(types, strings.TrimPrefix(ev.Type.String(), "EVENT_TYPE_")+"/"+ev.Detail)
	}
	got := strings.Join(types, " ")
	for _, want := range []string{"DEFINED/added", "STARTED/booted", "SHUTDOWN/requested", "STOPPED/shutdown"} {
		if !strings.Contains(got, want) {
			t.Errorf("watch saw %q, missing %s", got, want)
		}
	}
	if !strings.HasSuffix(got, "STOPPED/shutdown") {
		t.Errorf("watch saw %q, want it to end with the STOPPED event", got)
	}

	// GetDomain and a new watch still tell how it ended.
	if d := f.state(t); d.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN {
		t.Errorf("GetDomain after the end: %v", d)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "final.json"))
	if err != nil {
		t.Fatalf("final state file: %v", err)
	}
	var recorded apiv1.Domain
	if err := protojson.Unmarshal(b, &recorded); err != nil {
		t.Fatalf("final state file is not a Domain: %v\n%s", err, b)
	}
	if recorded.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN || recorded.VmiUid != string(f.vmi.UID) {
		t.Errorf("final state file = %v", &recorded)
	}
	if _, err := f.sync(t); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Sync after the end: %v, want FailedPrecondition", err)
	}
	if apiv1.ExitCode(final.StopReason) != apiv1.ExitGuestShutdown {
		t.Errorf("exit code of a guest shutdown = %d", apiv1.ExitCode(final.StopReason))
	}
}

func TestKillDestroys(t *testing.T) {
	f := newFixture(t)
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Kill(t.Context(), &apiv1.KillRequest{}); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if final := f.waitDone(t); final.StopReason != apiv1.StopReason_STOP_REASON_DESTROYED {
		t.Errorf("final = %v, want DESTROYED", final)
	}
}

func TestShutdownWithZeroGraceDestroys(t *testing.T) {
	f := newFixture(t)
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if _, err := f.client.Shutdown(t.Context(), &apiv1.ShutdownRequest{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if final := f.waitDone(t); final.StopReason != apiv1.StopReason_STOP_REASON_DESTROYED {
		t.Errorf("final = %v, want DESTROYED", final)
	}
}

func TestShutdownBeforeSyncDoesNothing(t *testing.T) {
	f := newFixture(t)
	if _, err := f.client.Shutdown(t.Context(), &apiv1.ShutdownRequest{}); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || d.ShutdownRequested {
		t.Errorf("after Shutdown without a domain: %v", d)
	}
}

func TestInfo(t *testing.T) {
	f := newFixture(t)
	info, err := f.client.Info(t.Context(), &apiv1.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.DomainType != domain.TypeTest || info.LauncherVersion != "test" {
		t.Errorf("Info = %v", info)
	}
}

// Sync's errors say whether asking again can help (apiv1.SyncErrorIsPermanent):
// a VMI that cannot be turned into a domain never runs here. Volumes' files
// that are missing: TestSyncWaitsForContainerDisk.
func TestSyncErrorsArePermanentOrRetryable(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*virtv1.VirtualMachineInstance)
		want   codes.Code
	}{
		{"not convertible: an interface without a binding", func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = virtv1.InterfaceBindingMethod{}
		}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.mutate(f.vmi)
			_, err := f.sync(t)
			if status.Code(err) != tt.want || !apiv1.SyncErrorIsPermanent(err) {
				t.Fatalf("Sync: %v, want %s (permanent)", err, tt.want)
			}
			if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || f.srv.Started() {
				t.Errorf("after a refused Sync the domain is %v, want ABSENT", d)
			}
		})
	}
}

// The parts' errors become the contract's codes: the kinds asking again
// cannot cure are permanent, anything else (libvirt failing) retryable, and
// libvirt's message is kept.
func TestGRPCErrorCodes(t *testing.T) {
	invalid := fmt.Errorf("define domain: %w", hypervisor.ErrInvalidConfig)
	tests := []struct {
		err  error
		want codes.Code
	}{
		{fmt.Errorf("convert: %w", supervisor.ErrInvalid), codes.InvalidArgument},
		{fmt.Errorf("prepare volumes: %w", supervisor.ErrPrecondition), codes.FailedPrecondition},
		{errors.New("start domain d: internal error: qemu unexpectedly closed the monitor"), codes.Internal},
		{status.Error(codes.FailedPrecondition, "interface \"default\": bind port 67"), codes.FailedPrecondition},
		{invalid, codes.Internal}, // unmarked: the supervisor marks what libvirt refused
	}
	for _, tt := range tests {
		err := grpcError(tt.err)
		if status.Code(err) != tt.want || apiv1.SyncErrorIsPermanent(err) != (tt.want != codes.Internal) {
			t.Errorf("grpcError(%v) = %v, want %s", tt.err, err, tt.want)
		}
		if !strings.Contains(err.Error(), status.Convert(tt.err).Message()) {
			t.Errorf("grpcError(%v) = %v: lost the message", tt.err, err)
		}
	}
}

// A Sync that finds the domain running succeeds, even with a VMI that could
// not be defined any more (files gone, spec unconvertible): the guest runs.
func TestSyncOfRunningDomainSucceeds(t *testing.T) {
	f := newFixture(t)
	if _, err := f.sync(t); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(f.dir, "disks")); err != nil {
		t.Fatal(err)
	}
	f.vmi.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}
	d, err := f.sync(t)
	if err != nil || d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Fatalf("Sync of a running domain = %v, %v; want it RUNNING without error", d, err)
	}
}

// The volume names KubeVirt's users write and the API takes (underscores,
// capitals) and a CD-ROM with readonly: false make a domain libvirt
// defines, with the disks' files under the volumes' names.
func TestSyncTakesVolumeNamesKubeVirtAllows(t *testing.T) {
	f := newFixture(t)
	f.vmi.Spec.Domain.Devices.Disks = []virtv1.Disk{
		{Name: "vmi-shared_disk", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}},
		{Name: "CI_x", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{Bus: virtv1.DiskBusSATA, ReadOnly: ptr.To(false)}}},
	}
	f.vmi.Spec.Volumes[0].Name, f.vmi.Spec.Volumes[1].Name = "vmi-shared_disk", "CI_x"
	if _, err := f.sync(t); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	for _, p := range []string{"disks/vmi-shared_disk/disk.img", "disks/CI_x/nocloud.iso"} {
		if _, err := os.Stat(filepath.Join(f.dir, p)); err != nil {
			t.Errorf("Sync did not prepare %s: %v", p, err)
		}
	}
}
