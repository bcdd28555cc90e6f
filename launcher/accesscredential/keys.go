package accesscredential

import (
	"fmt"
	"sort"
	"strings"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/launcher/projected"
)

// Propagation is how SSH public keys reach the guest.
type Propagation int

const (
	NoCloud Propagation = iota
	ConfigDrive
	GuestAgent
)

func propagates(c *virtv1.SSHPublicKeyAccessCredential, p Propagation) bool {
	m := c.PropagationMethod
	switch p {
	case NoCloud:
		return m.NoCloud != nil
	case ConfigDrive:
		return m.ConfigDrive != nil
	case GuestAgent:
		return m.QemuGuestAgent != nil
	}
	return false
}

// PublicKeys are the SSH public keys of vmi's credentials propagated by p,
// in spec order, read from their secrets below root.
func PublicKeys(vmi *virtv1.VirtualMachineInstance, root string, p Propagation) ([]string, error) {
	var keys []string
	for i, c := range vmi.Spec.AccessCredentials {
		if c.SSHPublicKey == nil || !propagates(c.SSHPublicKey, p) {
			continue
		}
		k, err := secretKeys(layout.AccessCredentialDir(root, i))
		if err != nil {
			return nil, fmt.Errorf("accessCredentials[%d]: %w", i, err)
		}
		keys = append(keys, k...)
	}
	return keys, nil
}

// secretKeys are the keys of a secret's values, one per non-empty,
// non-comment line, values in key order (the kubelet's files are sorted
// already; sorting again keeps the result stable whatever the reader).
func secretKeys(dir string) ([]string, error) {
	files, err := projected.Read(dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var keys []string
	for _, f := range files {
		for _, line := range strings.Split(string(f.Data), "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, line)
			}
		}
	}
	return keys, nil
}

// passwords are a userPassword secret's user names and passwords.
func passwords(dir string) (map[string]string, error) {
	files, err := projected.Read(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		if !strings.Contains(f.Name, "/") {
			out[f.Name] = strings.TrimRight(string(f.Data), "\n")
		}
	}
	return out, nil
}
