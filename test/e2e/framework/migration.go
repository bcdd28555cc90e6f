package framework

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// MigrationTimeout bounds a live migration of the test guest from the
// migration object's creation to its end: a target pod to start (a launcher
// and its private libvirtd), then at most a few hundred MiB to copy under
// software emulation on a loaded machine.
const MigrationTimeout = 5 * time.Minute

// Migrate asks for a live migration of VMI ns/vmi and returns the new
// migration object.
func (c *Cluster) Migrate(ctx context.Context, ns, vmi string) (*virtv1.VirtualMachineInstanceMigration, error) {
	return c.Virt.VirtualizationV1().VirtualMachineInstanceMigrations(ns).Create(ctx, &virtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-migrate-" + vmi + "-"},
		Spec:       virtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
	}, metav1.CreateOptions{})
}

// WaitMigration polls migration ns/name until cond accepts it.
func (c *Cluster) WaitMigration(ctx context.Context, ns, name string, timeout time.Duration, what string,
	cond func(*virtv1.VirtualMachineInstanceMigration) bool) (*virtv1.VirtualMachineInstanceMigration, error) {
	var m *virtv1.VirtualMachineInstanceMigration
	err := WaitFor(ctx, timeout, fmt.Sprintf("migration %s/%s %s", ns, name, what), func(ctx context.Context) (bool, error) {
		var err error
		m, err = c.Virt.VirtualizationV1().VirtualMachineInstanceMigrations(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if cond(m) {
			return true, nil
		}
		return false, fmt.Errorf("phase %q, conditions %+v", m.Status.Phase, m.Status.Conditions)
	})
	return m, err
}

// WaitMigrationEnded waits until a migration is Succeeded or Failed.
func (c *Cluster) WaitMigrationEnded(ctx context.Context, ns, name string) (*virtv1.VirtualMachineInstanceMigration, error) {
	return c.WaitMigration(ctx, ns, name, MigrationTimeout, "ended", func(m *virtv1.VirtualMachineInstanceMigration) bool {
		return m.Status.Phase.Final()
	})
}

// MigrationFailure says why a migration failed, from its condition and the
// migration state it kept.
func MigrationFailure(m *virtv1.VirtualMachineInstanceMigration) string {
	s := ""
	for _, c := range m.Status.Conditions {
		if c.Type == virtv1.VirtualMachineInstanceMigrationFailedCondition {
			s = fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	if ms := m.Status.MigrationState; ms != nil && ms.FailureReason != "" {
		s += " (" + ms.FailureReason + ")"
	}
	return s
}

// TickMarker starts each line of the test guest's heartbeat (virt.tick=1,
// hack/build-guest.sh): "VIRT-GUEST-TICK <n> <uptime>".
const TickMarker = "VIRT-GUEST-TICK"

var (
	tickLine = regexp.MustCompile(TickMarker + ` ([0-9]+) `)
	// wholeTickLine is a heartbeat line and nothing else, as two halves
	// joined must make (\r: the tty's line end is \r\n).
	wholeTickLine = regexp.MustCompile(`^` + TickMarker + ` ([0-9]+) [0-9]+\.[0-9]+\r?$`)
)

// Tick is one heartbeat line as the host saw it.
type Tick struct {
	N int
	// At is when the host first read the line (polled every 20 ms).
	At time.Time
	// Pod is the launcher pod whose serial log held it.
	Pod string
}

// Ticks follows the heartbeat of a guest booted with virt.tick=1 through
// the serial logs of every launcher pod of its VMI, the ones a migration
// adds included, so a test sees where each line was printed and when.
type Ticks struct {
	mu    sync.Mutex
	ticks map[int]Tick
	// repeats are ticks printed twice (on two pods, or twice on one).
	repeats []Tick
	// seams describe the logs' unjoined first and last partial lines, for
	// a message about missing ticks.
	seams []string
}

// FollowTicks starts following the heartbeat of VMI vmi until the test
// ends.
func (c *Cluster) FollowTicks(t *testing.T, vmi *virtv1.VirtualMachineInstance) *Ticks {
	tk := &Ticks{ticks: map[int]Tick{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		files := map[types.UID]*tickFile{}
		lastList := time.Time{}
		poll := time.NewTicker(20 * time.Millisecond)
		defer poll.Stop()
		for {
			if time.Since(lastList) > 500*time.Millisecond {
				lastList = time.Now()
				if pods, err := c.LauncherPods(ctx, vmi); err == nil {
					for i := range pods {
						p := &pods[i]
						if _, ok := files[p.UID]; !ok && p.Spec.NodeName != "" {
							files[p.UID] = &tickFile{path: c.SerialLogPath(p), pod: p.Name, created: p.CreationTimestamp.Time}
						}
					}
				}
			}
			for _, f := range files {
				tk.readFrom(f)
			}
			tk.joinSplitLines(slices.Collect(maps.Values(files)))
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
			}
		}
	}()
	return tk
}

// readFrom counts the complete heartbeat lines newly written to f.
func (tk *Ticks) readFrom(f *tickFile) {
	for _, n := range f.read() {
		tk.saw(Tick{N: n, At: time.Now(), Pod: f.pod})
	}
}

// joinSplitLines counts a heartbeat line the guest began printing in one
// pod's log and ended in another's: a migration pauses the guest wherever
// it is, halfway through a line included (the line is longer than the
// UART's 16-byte FIFO), and the rest comes out of the target's QEMU. Each
// pod's log then holds half a line, and neither half is a heartbeat.
func (tk *Ticks) joinSplitLines(files []*tickFile) {
	for _, b := range files {
		if !b.headOpen {
			continue
		}
		for _, a := range files {
			// Only an older pod's log can hold the line's beginning.
			if a == b || !a.created.Before(b.created) {
				continue
			}
			// b's first line was written after a's last byte: reading a
			// again now sees all of it, not a part that would join into
			// another number.
			tk.readFrom(a)
			if len(a.partial) == 0 {
				continue
			}
			m := wholeTickLine.FindSubmatch(append(slices.Clone(a.partial), b.head...))
			if m == nil {
				continue
			}
			if n, err := strconv.Atoi(string(m[1])); err == nil {
				tk.saw(Tick{N: n, At: time.Now(), Pod: b.pod})
				b.head, b.headOpen = nil, false
				a.joined = true
				break
			}
		}
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	tk.seams = tk.seams[:0]
	for _, f := range files {
		if f.headOpen || (len(f.partial) > 0 && !f.joined) {
			tk.seams = append(tk.seams, fmt.Sprintf("pod %s begins %q, ends %q", f.pod, clip(f.head), clip(f.partial)))
		}
	}
	slices.Sort(tk.seams)
}

// clip keeps a partial line short enough for a message.
func clip(b []byte) []byte {
	const keep = 60
	if len(b) > keep {
		return b[len(b)-keep:]
	}
	return b
}

func (tk *Ticks) saw(tick Tick) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if _, ok := tk.ticks[tick.N]; ok {
		tk.repeats = append(tk.repeats, tick)
		return
	}
	tk.ticks[tick.N] = tick
}

// Last is the newest tick seen, zero before the first.
func (tk *Ticks) Last() Tick {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	var last Tick
	for _, t := range tk.ticks {
		if t.N > last.N {
			last = t
		}
	}
	return last
}

// WaitPast waits until a tick newer than n was seen on pod (any pod when
// pod is "") and returns it.
func (tk *Ticks) WaitPast(ctx context.Context, n int, pod string, timeout time.Duration) (Tick, error) {
	var got Tick
	err := WaitFor(ctx, timeout, fmt.Sprintf("a heartbeat after %d from pod %q", n, pod), func(context.Context) (bool, error) {
		tk.mu.Lock()
		defer tk.mu.Unlock()
		for _, t := range tk.ticks {
			if t.N > n && (pod == "" || t.Pod == pod) {
				got = t
				return true, nil
			}
		}
		return false, nil
	})
	return got, err
}

// Continuity checks the heartbeat between ticks from and to: every number
// seen exactly once, and the longest pause between two consecutive ones
// (host time). It also returns the switch: the last tick of one pod
// followed by the first of another, if any.
func (tk *Ticks) Continuity(from, to int) (longest time.Duration, switched [2]Tick, err error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	var missing []int
	for n := from; n < to; n++ {
		a, okA := tk.ticks[n]
		b, okB := tk.ticks[n+1]
		if !okB {
			missing = append(missing, n+1)
		}
		if !okA || !okB {
			continue
		}
		longest = max(longest, b.At.Sub(a.At))
		if a.Pod != b.Pod {
			switched = [2]Tick{a, b}
		}
	}
	var errs []string
	if len(missing) > 0 {
		errs = append(errs, fmt.Sprintf("heartbeats missing between %d and %d: %v (logs: %v)", from, to, missing, tk.seams))
	}
	for _, r := range tk.repeats {
		if r.N >= from && r.N <= to {
			errs = append(errs, fmt.Sprintf("heartbeat %d printed again on pod %s", r.N, r.Pod))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		err = fmt.Errorf("%v", errs)
	}
	return longest, switched, err
}

// tickFile reads one serial log from where it stopped, complete lines only.
type tickFile struct {
	path    string
	pod     string
	created time.Time
	offset  int64
	partial []byte
	// started: the file's first line was read.
	started bool
	// head is the file's first line while headOpen: it was no heartbeat of
	// its own, so it may end one begun in another pod's log
	// (Ticks.joinSplitLines).
	head     []byte
	headOpen bool
	// joined: partial ended a heartbeat finished in another pod's log.
	joined bool
}

func (f *tickFile) read() []int {
	fd, err := os.Open(f.path)
	if err != nil {
		return nil
	}
	defer fd.Close()
	if st, err := fd.Stat(); err != nil || st.Size() < f.offset {
		// Rotated (launcher/logrotation): read the new file from its start.
		// Its first line is not the stream's.
		f.offset, f.partial, f.started = 0, nil, true
	}
	if _, err := fd.Seek(f.offset, io.SeekStart); err != nil {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(fd, 1<<20))
	if err != nil || len(data) == 0 {
		return nil
	}
	f.offset += int64(len(data))
	data = append(f.partial, data...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		f.partial = data
		return nil
	}
	f.partial = slices.Clone(data[end+1:])
	if !f.started {
		f.started = true
		if first := data[:bytes.IndexByte(data, '\n')]; !tickLine.Match(first) {
			f.head, f.headOpen = slices.Clone(first), true
		}
	}
	var out []int
	for _, m := range tickLine.FindAllSubmatch(data[:end], -1) {
		if n, err := strconv.Atoi(string(m[1])); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// PodUIDs lists the UIDs of pods, for messages.
func PodUIDs(pods []corev1.Pod) []types.UID {
	var out []types.UID
	for _, p := range pods {
		out = append(out, p.UID)
	}
	return out
}
