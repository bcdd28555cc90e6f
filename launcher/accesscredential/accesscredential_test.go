package accesscredential

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

func vmiWith(creds ...virtv1.AccessCredential) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{}
	vmi.Spec.AccessCredentials = creds
	return vmi
}

func sshCred(m virtv1.SSHPublicKeyAccessCredentialPropagationMethod) virtv1.AccessCredential {
	return virtv1.AccessCredential{SSHPublicKey: &virtv1.SSHPublicKeyAccessCredential{
		Source:            virtv1.SSHPublicKeyAccessCredentialSource{Secret: &virtv1.AccessCredentialSecretSource{SecretName: "k"}},
		PropagationMethod: m,
	}}
}

func writeSecret(t *testing.T, root string, i int, data map[string]string) {
	t.Helper()
	dir := layout.AccessCredentialDir(root, i)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPublicKeysByPropagation(t *testing.T) {
	root := t.TempDir()
	vmi := vmiWith(
		sshCred(virtv1.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &virtv1.NoCloudSSHPublicKeyAccessCredentialPropagation{}}),
		sshCred(virtv1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &virtv1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}}),
	)
	writeSecret(t, root, 0, map[string]string{"a": "ssh-ed25519 A one\n\n# a comment\nssh-rsa B two\n", "b": "ssh-ed25519 C three"})
	writeSecret(t, root, 1, map[string]string{"x": "ssh-ed25519 D four\n"})
	got, err := PublicKeys(vmi, root, NoCloud)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ssh-ed25519 A one", "ssh-rsa B two", "ssh-ed25519 C three"}; !slices.Equal(got, want) {
		t.Errorf("noCloud keys = %q, want %q", got, want)
	}
	got, err = PublicKeys(vmi, root, ConfigDrive)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ssh-ed25519 D four"}; !slices.Equal(got, want) {
		t.Errorf("configDrive keys = %q, want %q", got, want)
	}
}

type fakeAgent struct {
	mu        sync.Mutex
	keys      map[string][]string
	passwords map[string]string
	calls     int
}

func (f *fakeAgent) SetAuthorizedSSHKeys(_, user string, keys []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.keys[user] = keys
	return nil
}

func (f *fakeAgent) SetUserPassword(_, user, password string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.passwords[user] = password
	return nil
}

func (f *fakeAgent) snapshot() (map[string][]string, map[string]string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := map[string][]string{}
	for u, v := range f.keys {
		k[u] = slices.Clone(v)
	}
	p := map[string]string{}
	for u, v := range f.passwords {
		p[u] = v
	}
	return k, p, f.calls
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPropagatorAppliesAndFollowsChanges(t *testing.T) {
	root := t.TempDir()
	vmi := vmiWith(
		sshCred(virtv1.SSHPublicKeyAccessCredentialPropagationMethod{QemuGuestAgent: &virtv1.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"debian", "root"}}}),
		virtv1.AccessCredential{UserPassword: &virtv1.UserPasswordAccessCredential{
			Source:            virtv1.UserPasswordAccessCredentialSource{Secret: &virtv1.AccessCredentialSecretSource{SecretName: "p"}},
			PropagationMethod: virtv1.UserPasswordAccessCredentialPropagationMethod{QemuGuestAgent: &virtv1.QemuGuestAgentUserPasswordAccessCredentialPropagation{}},
		}},
	)
	writeSecret(t, root, 0, map[string]string{"k": "ssh-ed25519 A one\n"})
	writeSecret(t, root, 1, map[string]string{"debian": "pw1"})
	agent := &fakeAgent{keys: map[string][]string{}, passwords: map[string]string{}}
	p := New(agent, Config{Domain: "d", Root: root, Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	p.SetConnected(ctx, true) // before the VMI is known: nothing to do
	p.SetVMI(vmi)
	p.SetConnected(ctx, true)
	waitFor(t, "the keys and the password", func() bool {
		k, pw, _ := agent.snapshot()
		return len(k["debian"]) == 1 && len(k["root"]) == 1 && pw["debian"] == "pw1"
	})
	// Unchanged secrets are not applied again.
	_, _, calls := agent.snapshot()
	time.Sleep(50 * time.Millisecond)
	if _, _, now := agent.snapshot(); now != calls {
		t.Errorf("%d calls for unchanged credentials", now-calls)
	}
	writeSecret(t, root, 0, map[string]string{"l": "ssh-ed25519 B two\n"})
	waitFor(t, "the added key", func() bool {
		k, _, _ := agent.snapshot()
		return slices.Equal(k["debian"], []string{"ssh-ed25519 A one", "ssh-ed25519 B two"})
	})
	p.SetConnected(ctx, false)
	_, _, calls = agent.snapshot()
	writeSecret(t, root, 1, map[string]string{"debian": "pw2"})
	time.Sleep(50 * time.Millisecond)
	if _, _, now := agent.snapshot(); now != calls {
		t.Errorf("applied while the agent is disconnected")
	}
	p.SetConnected(ctx, true)
	waitFor(t, "everything again on reconnect", func() bool {
		_, pw, _ := agent.snapshot()
		return pw["debian"] == "pw2"
	})
}
