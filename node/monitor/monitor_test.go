package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/fakelauncher"
	"kubevirt.dev/virt/node/podfs"
)

var testConfig = Config{
	CallTimeout: 5 * time.Second,
	SyncTimeout: 5 * time.Second,
	Backoff:     wait.Backoff{Duration: 10 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 100 * time.Millisecond},
	CallRetries: 2,
	ReadyPoll:   5 * time.Millisecond,
}

// privateDir is a launcher pod's private directory below a kubelet root, as
// long as on a real node: its socket path exceeds a socket address's 108
// bytes.
func privateDir(t *testing.T) podfs.Dir {
	t.Helper()
	// The fake launchers serve as this process: that is the launchers' uid.
	pods := podfs.Pods{KubeletRoot: filepath.Join(t.TempDir(), "var", "lib", "kubelet"), LauncherUID: int64(os.Getuid())}
	dir := pods.PrivateDir("6f1c0c52-0d0e-4bd4-a1f4-0f6c4c5f2a11")
	if err := os.MkdirAll(dir.String(), 0o755); err != nil {
		t.Fatal(err)
	}
	if n := len(layout.LauncherSocket(dir.String())); n <= 108 {
		t.Fatalf("socket path is only %d bytes; the test must exceed a socket address", n)
	}
	return dir
}

func testVMI() *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "vmi-uid"},
		Spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{
			Interfaces: []virtv1.Interface{{Name: "default", Model: "virtio"}},
		}}},
	}
}

// changes counts the change callbacks per key.
type changes struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *changes) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *changes) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out after 10s waiting for %s: %v", what, err)
	}
}

func watch(t *testing.T, dir podfs.Dir, vmi *virtv1.VirtualMachineInstance) (*Monitor, *Launcher, *changes) {
	t.Helper()
	ch := &changes{}
	m := New(t.Context(), testConfig, clock.RealClock{}, ch.add)
	t.Cleanup(m.Close)
	l, err := m.Watch(Target{PodUID: "pod-uid", VMIKey: "ns/vm", VMIUID: vmi.UID, PrivateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return m, l, ch
}

func TestWatchFollowsTheDomain(t *testing.T) {
	dir := privateDir(t)
	vmi := testVMI()
	fake := fakelauncher.Start(t, dir.String(), vmi)
	_, l, ch := watch(t, dir, vmi)

	eventually(t, "the current (absent) domain", func() bool {
		return l.State().Domain.GetState() == apiv1.DomainState_DOMAIN_STATE_ABSENT
	})
	if info := l.State().Info; info.GetDomainType() != "qemu" || info.GetVmi().GetUid() != "vmi-uid" {
		t.Errorf("Info = %v, want the launcher's", info)
	}
	d, err := l.Sync(t.Context(), vmi, fakelauncher.NICs(vmi))
	if err != nil {
		t.Fatal(err)
	}
	if d.GetState() != apiv1.DomainState_DOMAIN_STATE_RUNNING || len(d.GetInterfaces()) != 1 {
		t.Fatalf("Sync answered %v, want a running domain with one interface", d)
	}
	eventually(t, "running domain", func() bool {
		return l.State().Domain.GetState() == apiv1.DomainState_DOMAIN_STATE_RUNNING
	})

	before := ch.count("ns/vm")
	fake.Event(apiv1.EventType_EVENT_TYPE_SUSPENDED, "paused", apiv1.DomainState_DOMAIN_STATE_PAUSED, "user")
	eventually(t, "paused domain and a change callback", func() bool {
		return l.State().Domain.GetState() == apiv1.DomainState_DOMAIN_STATE_PAUSED && ch.count("ns/vm") > before
	})

	if err := l.Shutdown(t.Context(), 7); err != nil {
		t.Fatal(err)
	}
	if got := fake.Calls().Shutdowns; len(got) != 1 || got[0] != 7 {
		t.Errorf("Shutdown grace periods = %v, want [7]", got)
	}
	fake.End("shutdown")
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop after the domain ended")
	}
	st := l.State()
	if !st.Ended() || st.Domain.GetStopReason() != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN || st.Err != nil {
		t.Errorf("state after the end = %+v, want ended by guest shutdown and no error", st)
	}
}

func TestPauseAndUnpause(t *testing.T) {
	dir := privateDir(t)
	vmi := testVMI()
	fake := fakelauncher.Start(t, dir.String(), vmi)
	_, l, _ := watch(t, dir, vmi)

	if err := l.Pause(t.Context()); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Pause before the guest started = %v, want FailedPrecondition", err)
	}
	if _, err := l.Sync(t.Context(), vmi, fakelauncher.NICs(vmi)); err != nil {
		t.Fatal(err)
	}
	if err := l.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the paused domain through the watch", func() bool {
		return l.State().Domain.GetState() == apiv1.DomainState_DOMAIN_STATE_PAUSED
	})
	if err := l.Unpause(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the resumed domain through the watch", func() bool {
		return l.State().Domain.GetState() == apiv1.DomainState_DOMAIN_STATE_RUNNING
	})
	if c := fake.Calls(); c.Pause != 2 || c.Unpause != 1 {
		t.Errorf("calls = %+v, want 2 Pause (one refused) and 1 Unpause", c)
	}
}

func TestWatchRefusesAnotherVMIsLauncher(t *testing.T) {
	dir := privateDir(t)
	vmi := testVMI()
	fake := fakelauncher.Start(t, dir.String(), vmi)
	fake.SetInfo(&apiv1.InfoResponse{DomainType: "qemu", Vmi: &apiv1.VMIRef{Namespace: "ns", Name: "other", Uid: "other-uid"}})
	_, l, ch := watch(t, dir, vmi)
	eventually(t, "a refused version check", func() bool {
		st := l.State()
		return st.Err != nil && ch.count("ns/vm") > 0
	})
	st := l.State()
	if !strings.Contains(st.Err.Error(), "other-uid") || st.Info != nil || st.Domain != nil || st.FailingSince.IsZero() {
		t.Errorf("state = %+v, want the mismatch as error, no info, no domain, failing", st)
	}
	if c := fake.Calls(); c.Watch != 0 || c.Sync != 0 {
		t.Errorf("calls = %+v, want no watch and no sync of another VMI's launcher", c)
	}
}

// TestWatchWaitsForTheReadyFile: a launcher is handed over while it may
// still wait for its volumes; it serves its socket before then, and the
// watch must not call it (a Sync would find no volume) until its ready
// file is there.
func TestWatchWaitsForTheReadyFile(t *testing.T) {
	dir := privateDir(t)
	vmi := testVMI()
	fake := fakelauncher.Start(t, dir.String(), vmi)
	ready := layout.ReadyFile(dir.String())
	if err := os.Remove(ready); err != nil {
		t.Fatal(err)
	}
	_, l, ch := watch(t, dir, vmi)
	eventually(t, "the wait reported", func() bool {
		st := l.State()
		return st.Err != nil && strings.Contains(st.Err.Error(), "not ready yet") && !st.FailingSince.IsZero() && ch.count("ns/vm") == 1
	})
	// Several polls later: still no call, and one report only.
	polled := time.Now()
	eventually(t, "a few more polls", func() bool { return time.Since(polled) > 10*testConfig.ReadyPoll })
	if c := fake.Calls(); c.Info != 0 || c.Watch != 0 {
		t.Fatalf("the launcher was called before it was ready: %+v", c)
	}
	if n := ch.count("ns/vm"); n != 1 {
		t.Errorf("%d change reports while waiting, want 1", n)
	}
	if err := os.WriteFile(ready, []byte("ns_vm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "connected once ready", func() bool {
		st := l.State()
		return st.Domain != nil && st.Err == nil && st.FailingSince.IsZero()
	})
}

func TestWatchReconnectsAfterTheLauncherWentAway(t *testing.T) {
	dir := privateDir(t)
	vmi := testVMI()
	fake := fakelauncher.Start(t, dir.String(), vmi)
	_, l, _ := watch(t, dir, vmi)
	eventually(t, "connected", func() bool { return l.State().Domain != nil })

	fake.Exit()
	eventually(t, "the broken watch reported", func() bool { return l.State().Err != nil })
	if _, err := l.Sync(t.Context(), vmi, fakelauncher.NICs(vmi)); status.Code(err) != codes.Unavailable {
		t.Errorf("Sync with no launcher = %v, want Unavailable", err)
	}

	fake = fakelauncher.Start(t, dir.String(), vmi)
	eventually(t, "reconnected", func() bool { return l.State().Err == nil && fake.Calls().Watch == 1 })
	if !l.State().FailingSince.IsZero() {
		t.Error("FailingSince still set after reconnecting")
	}
}

func TestObserveKeepsTheNewest(t *testing.T) {
	running := &apiv1.Domain{State: apiv1.DomainState_DOMAIN_STATE_RUNNING, StateChangeTimeUnixNano: 20}
	older := &apiv1.Domain{State: apiv1.DomainState_DOMAIN_STATE_SHUTOFF, StateChangeTimeUnixNano: 10}
	ended := &apiv1.Domain{State: apiv1.DomainState_DOMAIN_STATE_SHUTOFF, StopReason: apiv1.StopReason_STOP_REASON_CRASHED, StateChangeTimeUnixNano: 5}
	later := &apiv1.Domain{State: apiv1.DomainState_DOMAIN_STATE_PAUSED, StateChangeTimeUnixNano: 30}
	tests := []struct {
		name string
		seq  []*apiv1.Domain
		want *apiv1.Domain
	}{
		{name: "newer replaces", seq: []*apiv1.Domain{older, running}, want: running},
		{name: "older is ignored", seq: []*apiv1.Domain{running, older}, want: running},
		{name: "an end replaces whatever its time", seq: []*apiv1.Domain{later, ended}, want: ended},
		{name: "nothing replaces an end", seq: []*apiv1.Domain{ended, later}, want: ended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := &changes{}
			l := &Launcher{target: Target{VMIKey: "k"}, changed: ch.add}
			for _, d := range tt.seq {
				l.Observe(d)
			}
			if got := l.State().Domain; got != tt.want {
				t.Errorf("domain = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadFinalState(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    apiv1.StopReason
		wantNil bool
		wantErr bool
		link    string
	}{
		{name: "none recorded", wantNil: true},
		{name: "guest shutdown", content: `{"name":"d","state":"DOMAIN_STATE_SHUTOFF","stopReason":"STOP_REASON_GUEST_SHUTDOWN"}`, want: apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN},
		{name: "field of a newer launcher", content: `{"stopReason":"STOP_REASON_CRASHED","reason":"failed","futureField":1}`, want: apiv1.StopReason_STOP_REASON_CRASHED},
		{name: "garbage", content: `{`, wantErr: true},
		// A tenant's attacks on the file (more in node/podfs).
		{name: "symlink to /dev/zero", link: "/dev/zero", wantErr: true},
		{name: "symlink to /etc/shadow", link: "/etc/shadow", wantErr: true},
		{name: "bigger than the cap", content: `{"name":"` + strings.Repeat("x", apiv1.MaxFinalStateBytes) + `"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := privateDir(t)
			if tt.content != "" {
				if err := os.WriteFile(layout.FinalStateFile(dir.String()), []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link != "" {
				if err := os.Symlink(tt.link, layout.FinalStateFile(dir.String())); err != nil {
					t.Fatal(err)
				}
			}
			d, err := ReadFinalState(dir)
			switch {
			case tt.wantErr:
				if err == nil {
					t.Fatalf("ReadFinalState = %v, want an error", d)
				}
			case err != nil:
				t.Fatal(err)
			case tt.wantNil:
				if d != nil {
					t.Errorf("ReadFinalState = %v, want nil", d)
				}
			case d.GetStopReason() != tt.want:
				t.Errorf("stop reason = %v, want %v", d.GetStopReason(), tt.want)
			}
		})
	}
}

func TestForgetStopsTheWatch(t *testing.T) {
	dir := privateDir(t)
	vmi := testVMI()
	fakelauncher.Start(t, dir.String(), vmi)
	m, l, _ := watch(t, dir, vmi)
	eventually(t, "connected", func() bool { return l.State().Domain != nil })
	m.Forget(types.UID("pod-uid"))
	select {
	case <-l.Done():
	default:
		t.Fatal("Forget returned before the watch stopped")
	}
	if _, ok := m.Get("pod-uid"); ok || len(m.PodUIDs()) != 0 {
		t.Error("launcher still known after Forget")
	}
}
