package monitor

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"kubevirt.dev/virt/node/podfs"
)

// Config tunes the calls to launchers.
type Config struct {
	// CallTimeout bounds Info, Shutdown, Pause, Unpause and SoftReboot.
	CallTimeout time.Duration
	// SyncTimeout bounds Sync, which prepares volume files and starts QEMU.
	SyncTimeout time.Duration
	// Backoff spaces the attempts to (re)open a launcher's WatchDomain
	// stream; it starts over after a stream that delivered messages.
	Backoff wait.Backoff
	// CallRetries is how often a unary call is retried while the launcher is
	// Unavailable (its socket not answering for a moment).
	CallRetries int
	// ReadyPoll is how often the launcher's ready file is looked for before
	// the first connection (zero: DefaultReadyPoll). The VMI is handed to
	// the node once the launcher runs, not once a kubelet's probe (1-s
	// period) saw it ready: this wait is on the path of every start.
	ReadyPoll time.Duration
}

// DefaultReadyPoll: a missing file costs one openat2, and a launcher is
// ready about half a second after its container started.
const DefaultReadyPoll = 50 * time.Millisecond

// DefaultConfig suits launchers on the same host: answers take milliseconds,
// so a launcher that has not answered in seconds is in trouble.
var DefaultConfig = Config{
	CallTimeout: 10 * time.Second,
	SyncTimeout: 60 * time.Second,
	Backoff:     wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: 10 * time.Second},
	CallRetries: 3,
	ReadyPoll:   DefaultReadyPoll,
}

// Target names a launcher to watch.
type Target struct {
	// PodUID is the launcher pod's UID, the key of the launcher.
	PodUID types.UID
	// VMIKey (namespace/name) is passed to the change callback.
	VMIKey string
	// VMIUID is the UID the launcher must report in Info: a socket that
	// answers for another VMI is refused.
	VMIUID types.UID
	// PrivateDir is the launcher pod's private directory on the host, where
	// the launcher's socket is.
	PrivateDir podfs.Dir
}

// Monitor watches the launchers of a node. Create it with New.
type Monitor struct {
	ctx     context.Context
	cfg     Config
	clock   clock.PassiveClock
	changed func(vmiKey string)

	mu        sync.Mutex
	launchers map[types.UID]*Launcher
}

// New returns a monitor whose watches live until ctx ends or they are
// forgotten. changed is called, from the watches' goroutines, with the VMI
// key of a launcher whose state changed; it must not block. c stamps
// State.FailingSince: pass the clock that measures it.
func New(ctx context.Context, cfg Config, c clock.PassiveClock, changed func(vmiKey string)) *Monitor {
	return &Monitor{ctx: ctx, cfg: cfg, clock: c, changed: changed, launchers: map[types.UID]*Launcher{}}
}

// Watch returns the launcher of t.PodUID, starting to watch it if needed.
func (m *Monitor) Watch(t Target) (*Launcher, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.launchers[t.PodUID]; ok {
		return l, nil
	}
	l, err := newLauncher(m.ctx, t, m.cfg, m.clock, m.changed)
	if err != nil {
		return nil, err
	}
	m.launchers[t.PodUID] = l
	klog.FromContext(m.ctx).V(2).Info("Watching launcher", "vmi", t.VMIKey, "pod", t.PodUID, "dir", t.PrivateDir)
	return l, nil
}

// Get returns the launcher of podUID if it is watched.
func (m *Monitor) Get(podUID types.UID) (*Launcher, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.launchers[podUID]
	return l, ok
}

// Forget stops watching the launcher of podUID and closes its connection.
func (m *Monitor) Forget(podUID types.UID) {
	m.mu.Lock()
	l, ok := m.launchers[podUID]
	delete(m.launchers, podUID)
	m.mu.Unlock()
	if ok {
		l.close()
		klog.FromContext(m.ctx).V(2).Info("Stopped watching launcher", "vmi", l.target.VMIKey, "pod", podUID)
	}
}

// ForgetVMI forgets every launcher watched for the VMI of key.
func (m *Monitor) ForgetVMI(key string) {
	m.mu.Lock()
	var uids []types.UID
	for uid, l := range m.launchers {
		if l.target.VMIKey == key {
			uids = append(uids, uid)
		}
	}
	m.mu.Unlock()
	for _, uid := range uids {
		m.Forget(uid)
	}
}

// PodUIDs are the launchers being watched.
func (m *Monitor) PodUIDs() []types.UID {
	m.mu.Lock()
	defer m.mu.Unlock()
	uids := make([]types.UID, 0, len(m.launchers))
	for uid := range m.launchers {
		uids = append(uids, uid)
	}
	return uids
}

// Close forgets every launcher.
func (m *Monitor) Close() {
	for _, uid := range m.PodUIDs() {
		m.Forget(uid)
	}
}
