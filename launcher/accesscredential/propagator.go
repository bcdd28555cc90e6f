package accesscredential

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// DefaultInterval is how often a Propagator looks at the secrets' files.
// The kubelet itself refreshes a changed Secret's volume within about a
// minute (its sync period plus its cache's TTL).
const DefaultInterval = 5 * time.Second

// Agent is what a Propagator asks of the guest agent: *hypervisor.Conn, or
// a fake in tests.
type Agent interface {
	// SetAuthorizedSSHKeys replaces user's authorized_keys with keys
	// (virDomainAuthorizedSSHKeysSet: guest-ssh-add-authorized-keys).
	SetAuthorizedSSHKeys(domain, user string, keys []string) error
	// SetUserPassword sets user's password (virDomainSetUserPassword:
	// guest-set-user-password).
	SetUserPassword(domain, user, password string) error
}

// Config is what a Propagator propagates, and where.
type Config struct {
	Domain string
	// Root is layout.AccessCredentialDirRoot.
	Root string
	// Interval: zero is DefaultInterval.
	Interval time.Duration
}

// Propagator applies the guest agent's credentials while the agent is
// connected: all of them as it connects, then each that changed.
type Propagator struct {
	agent Agent
	cfg   Config

	mu   sync.Mutex
	vmi  *virtv1.VirtualMachineInstance
	stop context.CancelFunc
	// done closes when the running loop has returned.
	done chan struct{}
}

// New is a Propagator of cfg, idle until SetConnected.
func New(agent Agent, cfg Config) *Propagator {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	return &Propagator{agent: agent, cfg: cfg}
}

// Wanted reports whether vmi has credentials the guest agent propagates.
func Wanted(vmi *virtv1.VirtualMachineInstance) bool {
	for _, c := range vmi.Spec.AccessCredentials {
		if (c.SSHPublicKey != nil && c.SSHPublicKey.PropagationMethod.QemuGuestAgent != nil) ||
			(c.UserPassword != nil && c.UserPassword.PropagationMethod.QemuGuestAgent != nil) {
			return true
		}
	}
	return false
}

// SetVMI tells the Propagator the VMI whose credentials it propagates, as
// the launcher learns it (its first Sync).
func (p *Propagator) SetVMI(vmi *virtv1.VirtualMachineInstance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.vmi = vmi
}

// SetConnected follows the agent's lifecycle: a connected agent (a fresh
// guest, or one that rebooted) gets everything anew. Once it returns, the
// previous loop has ended: nothing is sent to an agent said to be gone.
// The wait is short: a call in flight fails as libvirt drops the agent,
// and at worst ends with the agent timeout (guestagent.Config.Timeout).
func (p *Propagator) SetConnected(ctx context.Context, connected bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		p.stop()
		<-p.done
		p.stop, p.done = nil, nil
	}
	if connected && p.vmi != nil && Wanted(p.vmi) {
		ctx, p.stop = context.WithCancel(ctx)
		p.done = make(chan struct{})
		go p.run(ctx, p.vmi, p.done)
	}
}

func (p *Propagator) run(ctx context.Context, vmi *virtv1.VirtualMachineInstance, done chan<- struct{}) {
	defer close(done)
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "domain", p.cfg.Domain)
	// applied is what the agent took last, by target ("ssh/user",
	// "password/user"), as a digest: nothing secret stays in memory
	// longer than a pass.
	applied := map[string][32]byte{}
	tick := time.NewTicker(p.cfg.Interval)
	defer tick.Stop()
	for {
		p.pass(ctx, logger, vmi, applied)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pass applies every credential whose content differs from what the agent
// took last. A failure is retried at the next pass; a cancelled ctx ends
// the pass before its next call to the agent.
func (p *Propagator) pass(ctx context.Context, logger klog.Logger, vmi *virtv1.VirtualMachineInstance, applied map[string][32]byte) {
	keys := map[string][]string{} // by user
	pw := map[string]string{}
	for i, c := range vmi.Spec.AccessCredentials {
		dir := layout.AccessCredentialDir(p.cfg.Root, i)
		switch {
		case c.SSHPublicKey != nil && c.SSHPublicKey.PropagationMethod.QemuGuestAgent != nil:
			k, err := secretKeys(dir)
			if err != nil {
				logger.Error(err, "Reading an SSH key secret failed", "credential", i)
				return
			}
			for _, u := range c.SSHPublicKey.PropagationMethod.QemuGuestAgent.Users {
				keys[u] = append(keys[u], k...)
			}
		case c.UserPassword != nil && c.UserPassword.PropagationMethod.QemuGuestAgent != nil:
			m, err := passwords(dir)
			if err != nil {
				logger.Error(err, "Reading a password secret failed", "credential", i)
				return
			}
			for u, v := range m {
				pw[u] = v
			}
		}
	}
	for u, k := range keys {
		target, sum := "ssh/"+u, sha256.Sum256([]byte(strings.Join(k, "\n")))
		if applied[target] == sum {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if err := p.agent.SetAuthorizedSSHKeys(p.cfg.Domain, u, k); err != nil {
			logger.V(2).Info("Setting SSH keys through the guest agent failed", "user", u, "err", err)
			continue
		}
		applied[target] = sum
		logger.Info("Set SSH keys through the guest agent", "user", u, "keys", len(k))
	}
	for u, v := range pw {
		target, sum := "password/"+u, sha256.Sum256([]byte(v))
		if applied[target] == sum {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if err := p.agent.SetUserPassword(p.cfg.Domain, u, v); err != nil {
			logger.V(2).Info("Setting a password through the guest agent failed", "user", u, "err", err)
			continue
		}
		applied[target] = sum
		logger.Info("Set a password through the guest agent", "user", u)
	}
}
