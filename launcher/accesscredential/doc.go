// Package accesscredential puts spec.accessCredentials into the guest, as
// KubeVirt does: SSH public keys for the cloud-init seeds (PublicKeys, read
// by launcher/disk for noCloud and configDrive propagation), and, through
// the guest agent, SSH keys into users' authorized_keys and user passwords
// (a Propagator).
//
// The secrets reach the launcher as the kubelet projects them into its pod
// (layout.AccessCredentialDir), so the usual RBAC applies and nobody on the
// node needs to read Secrets from the API; the kubelet updates the files
// when a Secret changes, and a Propagator re-applies what changed while the
// agent is connected, without a restart.
//
// It talks to libvirt only through an Agent (launcher/hypervisor's Conn).
package accesscredential
