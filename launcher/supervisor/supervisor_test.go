package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/layout"
)

// The tests supervise domains of libvirt's in-process test driver, whose
// state the whole process shares: every test has a VMI of its own UID. The
// hooks are recorded, standing in for the guest agent and the leases.

type fixture struct {
	sup *Supervisor
	vmi *virtv1.VirtualMachineInstance
	dir string
	// events delivers events the test driver never sends (the guest
	// agent's), in order with libvirt's own.
	events chan hypervisor.Event

	// gate, while held, keeps events from the supervisor: what it says
	// between a change and the change's event.
	gate sync.Mutex

	mu     sync.Mutex
	agent  []bool // what AgentConnected was told, in order
	marker string // what Describe adds to every picture
}

func newFixture(t *testing.T, opts ...func(*Config)) *fixture {
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
				Devices:   virtv1.Devices{Disks: []virtv1.Disk{{Name: "scratch"}}},
			},
			Volumes: []virtv1.Volume{
				{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("16Mi")}}},
			},
		},
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	f := &fixture{vmi: vmi, dir: dir, events: make(chan hypervisor.Event), marker: "before"}
	cfg := Config{
		VMI:        &apiv1.VMIRef{Namespace: "ns", Name: "vm", Uid: string(uid)},
		DomainType: domain.TypeTest,
		Disks:      disk.Dirs{Disks: filepath.Join(dir, "disks")},
		Host: domain.Host{
			SerialSocket: filepath.Join(dir, "serial0.sock"), SerialLog: filepath.Join(dir, "serial0.log"),
			VNCSocket: filepath.Join(dir, "vnc.sock"),
		},
		FinalStateFile:  filepath.Join(dir, "final.json"),
		RepressInterval: 10 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	f.sup = New(conn, cfg, Hooks{
		Describe: func(d *apiv1.Domain) {
			f.mu.Lock()
			defer f.mu.Unlock()
			d.GuestHostname = f.marker
		},
		AgentConnected: func(_ context.Context, connected bool) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.agent = append(f.agent, connected)
		},
	})
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
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
			f.gate.Lock()
			select {
			case <-ctx.Done():
				f.gate.Unlock()
				return
			case events <- e:
			}
			f.gate.Unlock()
		}
	}()
	go f.sup.Run(ctx, events)
	return f
}

func (f *fixture) start(t *testing.T) (*apiv1.Domain, error) {
	t.Helper()
	return f.sup.Start(t.Context(), f.vmi, f.nics(), nil)
}

// nics are the NICs a binding would have prepared (without leases: the
// test driver opens no tap).
func (f *fixture) nics() []*apiv1.InterfaceNetwork {
	var out []*apiv1.InterfaceNetwork
	for i, iface := range f.vmi.Spec.Domain.Devices.Interfaces {
		out = append(out, &apiv1.InterfaceNetwork{Name: iface.Name, TapDevice: fmt.Sprintf("tap%d", i), MacAddress: fmt.Sprintf("52:54:00:00:00:%02x", i+1), Mtu: 1500})
	}
	return out
}

func (f *fixture) waitDone(t *testing.T) *apiv1.Domain {
	t.Helper()
	select {
	case <-f.sup.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("domain did not end within 10s; it is %v", f.sup.Domain())
	}
	return f.sup.Final()
}

func (f *fixture) agentCalls() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.agent...)
}

// next reads events up to one of type typ.
func next(t *testing.T, events <-chan *apiv1.DomainEvent, typ apiv1.EventType) *apiv1.DomainEvent {
	t.Helper()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the watch ended before %s", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10s", typ)
		}
	}
}

func TestStartDefinesStartsAndIsIdempotent(t *testing.T) {
	f := newFixture(t)
	if d := f.sup.Domain(); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || d.GuestHostname != "before" {
		t.Fatalf("before Start: %v, want ABSENT with what Describe adds", d)
	}
	calls := 0
	d, err := f.sup.Start(t.Context(), f.vmi, f.nics(), func() error { calls++; return nil })
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING || d.Name != f.sup.Name() || !f.sup.Started() {
		t.Fatalf("after Start: %v", d)
	}
	if len(d.Interfaces) != 1 || d.Interfaces[0].Mac == "" {
		t.Errorf("interfaces = %v, want the default pod interface with libvirt's MAC", d.Interfaces)
	}
	d2, err := f.sup.Start(t.Context(), f.vmi, f.nics(), func() error { calls++; return nil })
	if err != nil || d2.Uuid != d.Uuid || d2.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Errorf("second Start: %v, %v; want the same running domain", d2, err)
	}
	if calls != 1 {
		t.Errorf("beforeDefine ran %d times, want once: only a Start that may define runs it", calls)
	}
}

// What beforeDefine refuses is not defined; its error is Start's, as is.
func TestStartStopsAtBeforeDefine(t *testing.T) {
	f := newFixture(t)
	refused := errors.New("no lease")
	if _, err := f.sup.Start(t.Context(), f.vmi, f.nics(), func() error { return refused }); err != refused {
		t.Fatalf("Start: %v, want beforeDefine's error", err)
	}
	if d := f.sup.Domain(); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || f.sup.Started() {
		t.Errorf("after a refused Start: %v", d)
	}
}

// Errors say whether trying again can help: a VMI that cannot be converted
// is ErrInvalid; a domain that ended, or is not running for Pause, is
// ErrPrecondition.
func TestErrorKinds(t *testing.T) {
	f := newFixture(t)
	if err := f.sup.Pause(); !errors.Is(err, ErrPrecondition) {
		t.Errorf("Pause before Start: %v, want ErrPrecondition", err)
	}
	if err := f.sup.SoftReboot(t.Context()); !errors.Is(err, ErrPrecondition) {
		t.Errorf("SoftReboot before Start: %v, want ErrPrecondition", err)
	}
	bad := f.vmi.DeepCopy()
	bad.Spec.Domain.Devices.Interfaces[0].InterfaceBindingMethod = virtv1.InterfaceBindingMethod{}
	if _, err := f.sup.Start(t.Context(), bad, f.nics(), nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "convert VMI") {
		t.Errorf("Start of an unconvertible VMI: %v, want ErrInvalid", err)
	}
	if _, err := f.start(t); err != nil {
		t.Fatal(err)
	}
	if err := f.sup.Kill(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.waitDone(t)
	if _, err := f.start(t); !errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "already ran") {
		t.Errorf("Start after the end: %v, want ErrPrecondition", err)
	}
	if err := f.sup.Unpause(); !errors.Is(err, ErrPrecondition) {
		t.Errorf("Unpause after the end: %v, want ErrPrecondition", err)
	}
}

func TestLibvirtErrorMarksOnlyRefusedDefinitions(t *testing.T) {
	if err := libvirtError(fmt.Errorf("define domain: %w", hypervisor.ErrInvalidConfig)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "define domain") {
		t.Errorf("refused definition: %v, want ErrInvalid with libvirt's message", err)
	}
	if err := libvirtError(errors.New("qemu unexpectedly closed the monitor")); errors.Is(err, ErrInvalid) || errors.Is(err, ErrPrecondition) {
		t.Errorf("other libvirt failure marked: %v", err)
	}
	if libvirtError(nil) != nil {
		t.Error("no error marked as one")
	}
}

// A shutdown presses the button (the test driver powers off at once), and
// the end is recorded: in the final domain, in the file, on the watch,
// which then ends; later changes announced by others are dropped.
func TestShutdownEndsDomainAndRecordsIt(t *testing.T) {
	f := newFixture(t)
	current, events, stop := f.sup.Watch()
	defer stop()
	if current.Type != apiv1.EventType_EVENT_TYPE_CURRENT || current.Domain.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
		t.Fatalf("first watch message = %v", current)
	}
	if _, err := f.start(t); err != nil {
		t.Fatal(err)
	}
	if err := f.sup.RequestShutdown(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	final := f.waitDone(t)
	if final.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN || final.State != apiv1.DomainState_DOMAIN_STATE_SHUTOFF || !final.ShutdownRequested {
		t.Errorf("final = %v, want SHUTOFF by GUEST_SHUTDOWN, shutdown requested", final)
	}
	if got := f.agentCalls(); len(got) == 0 || got[len(got)-1] {
		t.Errorf("AgentConnected calls %v, want the agent's end with QEMU last", got)
	}
	var seen []string
	for ev := range events {
		seen = append(seen, strings.TrimPrefix(ev.Type.String(), "EVENT_TYPE_")+"/"+ev.Detail)
	}
	got := strings.Join(seen, " ")
	for _, want := range []string{"STARTED/booted", "SHUTDOWN/requested"} {
		if !strings.Contains(got, want) {
			t.Errorf("watch saw %q, missing %s", got, want)
		}
	}
	if !strings.HasSuffix(got, "STOPPED/shutdown") {
		t.Errorf("watch saw %q, want it to end with the STOPPED event", got)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "final.json"))
	if err != nil {
		t.Fatalf("final state file: %v", err)
	}
	var recorded apiv1.Domain
	if err := protojson.Unmarshal(b, &recorded); err != nil || recorded.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN {
		t.Errorf("final state file = %v (%v)", &recorded, err)
	}

	f.mu.Lock()
	f.marker = "after"
	f.mu.Unlock()
	f.sup.Changed(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_AGENT, Detail: "guest info"})
	if d := f.sup.Domain(); d.GuestHostname != "before" || d.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN {
		t.Errorf("the final domain changed: %v", d)
	}
	if current, events, _ := f.sup.Watch(); events != nil || current.Domain.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN {
		t.Errorf("a watch after the end: %v, events %v; want the final domain and no stream", current, events)
	}
}

// A domain that ran and is shut off has ended even before its stopped
// event arrives: a picture taken in between says how it stopped. Without
// the stop reason a node daemon took a source launcher whose guest had
// just migrated away for one that lost its guest, and failed the VMI.
func TestStoppedBeforeItsEventReadsEnded(t *testing.T) {
	f := newFixture(t)
	_, events, stop := f.sup.Watch()
	defer stop()
	if _, err := f.start(t); err != nil {
		t.Fatal(err)
	}
	next(t, events, apiv1.EventType_EVENT_TYPE_STARTED)
	f.gate.Lock()
	if err := f.sup.conn.Destroy(f.sup.name); err != nil {
		f.gate.Unlock()
		t.Fatal(err)
	}
	d := f.sup.Domain()
	f.gate.Unlock()
	if d.State != apiv1.DomainState_DOMAIN_STATE_SHUTOFF || d.StopReason != apiv1.StopReason_STOP_REASON_DESTROYED {
		t.Errorf("domain before its stopped event = %s/%s, want SHUTOFF by DESTROYED", d.State, d.StopReason)
	}
	if final := f.waitDone(t); final.StopReason != apiv1.StopReason_STOP_REASON_DESTROYED {
		t.Errorf("final = %v, want DESTROYED", final)
	}
}

// A shutdown without grace destroys at once. (The test driver's domains
// power off on the first press, paused or not: test/integration/launcher
// has the guest that ignores the button and is destroyed at the deadline.)
func TestShutdownWithoutGraceDestroys(t *testing.T) {
	f := newFixture(t)
	if err := f.sup.RequestShutdown(t.Context(), 0); err != nil || f.sup.Domain().ShutdownRequested {
		t.Fatalf("a shutdown before the start: %v, %v; want nothing done", err, f.sup.Domain())
	}
	if _, err := f.start(t); err != nil {
		t.Fatal(err)
	}
	if err := f.sup.RequestShutdown(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if final := f.waitDone(t); final.StopReason != apiv1.StopReason_STOP_REASON_DESTROYED {
		t.Errorf("final = %v, want DESTROYED", final)
	}
}

// libvirt's agent events go to the AgentConnected hook, and the watchers
// hear of what others announce with Changed, with the domain as Describe
// completes it.
func TestHooks(t *testing.T) {
	f := newFixture(t)
	_, events, stop := f.sup.Watch()
	defer stop()
	if _, err := f.start(t); err != nil {
		t.Fatal(err)
	}
	f.events <- hypervisor.Event{Domain: f.sup.Name(), Type: hypervisor.AgentEvent, Detail: hypervisor.AgentConnected}
	if ev := next(t, events, apiv1.EventType_EVENT_TYPE_AGENT); ev.Detail != "connected" {
		t.Errorf("agent event %v", ev)
	}
	if got := f.agentCalls(); len(got) != 1 || !got[0] {
		t.Errorf("AgentConnected calls %v, want [true]", got)
	}
	f.mu.Lock()
	f.marker = "after"
	f.mu.Unlock()
	f.sup.Changed(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_INTERFACES_CHANGED, Detail: "lease default"})
	ev := next(t, events, apiv1.EventType_EVENT_TYPE_INTERFACES_CHANGED)
	if ev.Detail != "lease default" || ev.Domain.GuestHostname != "after" || ev.Domain.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Errorf("announced change %v, want the running domain as Describe completes it now", ev)
	}
}

// A watcher that falls more than watchBuffer events behind is dropped: its
// channel closes while the domain has not ended.
func TestSlowWatcherIsDropped(t *testing.T) {
	f := newFixture(t)
	_, events, stop := f.sup.Watch()
	defer stop()
	for range watchBuffer + 1 {
		f.sup.Changed(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_AGENT, Detail: "guest info"})
	}
	n := 0
	for range events {
		n++
	}
	if n != watchBuffer || f.sup.Final() != nil {
		t.Errorf("the slow watcher got %d events before its channel closed, want %d", n, watchBuffer)
	}
}

func (f *fixture) addContainerDisk() {
	f.vmi.Spec.Volumes = append(f.vmi.Spec.Volumes, virtv1.Volume{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "img"}}})
	f.vmi.Spec.Domain.Devices.Disks = append(f.vmi.Spec.Domain.Devices.Disks, virtv1.Disk{Name: "root"})
	virtv1.SetObjectDefaults_VirtualMachineInstance(f.vmi)
}

func (f *fixture) writeContainerDiskRecord(t *testing.T, rec layout.ContainerDisk) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	path := layout.ContainerDiskRecord(filepath.Join(f.dir, "disks"), "root")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A container disk whose record is missing when the domain is started
// never comes (the pod was ready without it: disk.WaitForContainerDisks), and one
// whose container found no disk never runs: both are ErrPrecondition, and
// nothing is defined. With the record the guest runs on an overlay.
func TestContainerDisk(t *testing.T) {
	f := newFixture(t)
	f.addContainerDisk()
	if _, err := f.start(t); !errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "has not written") {
		t.Fatalf("Start without the record: %v, want ErrPrecondition", err)
	}
	f.writeContainerDiskRecord(t, layout.ContainerDisk{Error: "source directory /disk holds no regular file; it must hold exactly one"})
	if _, err := f.start(t); !errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "holds no regular file") {
		t.Fatalf("Start with the container's error: %v, want ErrPrecondition with its reason", err)
	}
	if d := f.sup.Domain(); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || f.sup.Started() {
		t.Fatalf("after refused Starts the domain is %v, want ABSENT", d)
	}

	image := filepath.Join(t.TempDir(), "disk.img")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", image, "16M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v\n%s", err, out)
	}
	// The test's own process stands in for the container: its root is
	// the host's.
	f.writeContainerDiskRecord(t, layout.ContainerDisk{PID: os.Getpid(), Path: image})
	if d, err := f.start(t); err != nil || d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Fatalf("Start with the record: %v, %v; want RUNNING", d, err)
	}
	if _, err := os.Stat(layout.DiskImage(filepath.Join(f.dir, "disks"), "root")); err != nil {
		t.Errorf("the container disk's overlay: %v", err)
	}
}
