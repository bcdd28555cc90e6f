package hypervisor

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// EmbedURI is the URI of the embedded QEMU driver rooted at root.
func EmbedURI(root string) string {
	return "qemu:///embed?root=" + url.QueryEscape(root)
}

// EmbedRoot returns the root directory of an embedded-driver URI, or "" for
// any other URI.
func EmbedRoot(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "qemu" || u.Path != "/embed" {
		return ""
	}
	return u.Query().Get("root")
}

// QEMUConf is the embedded driver's qemu.conf. What each line does, as
// measured with libvirt 9.0 (docs/launcher.md has the table):
//   - stdio_handler: needed always. The default hands QEMU's output to
//     virtlogd, which no pod runs: starting a domain fails without it.
//   - user/group: needed when the launcher runs as root. libvirt would run
//     QEMU as libvirt-qemu, which cannot read the launcher's files since
//     nothing relabels them (security_driver none, dynamic_ownership 0).
//   - swtpm_user/swtpm_group: written only as root, for a TPM's swtpm_setup
//     and swtpm, which root libvirt runs as tss: swtpm_setup then cannot
//     write its state under the root (exit status 1). Unprivileged libvirt
//     runs them as its own user unless these name one, and then fails to
//     switch to it without CAP_SETGID (exit status 125), even to itself.
//   - cgroup_controllers, namespaces, security_driver, dynamic_ownership,
//     remember_owner: used only by privileged (root) libvirt. They keep it
//     from writing the kubelet's cgroups (read-only in a container), from
//     making a mount namespace per QEMU (CAP_SYS_ADMIN) and from chowning or
//     labelling files; unprivileged libvirt ignores them.
func QEMUConf(uid, gid int) string {
	conf := fmt.Sprintf(`# Written by virt-launcher; see docs/launcher.md.
# QEMU's stdout/stderr go to a file under log/, not to virtlogd (none runs in a pod).
stdio_handler = "file"
# The pod's cgroup is the kubelet's to manage; a container cannot write the
# cgroup tree anyway.
cgroup_controllers = [ ]
# A private /dev mount namespace per QEMU needs CAP_SYS_ADMIN.
namespaces = [ ]
# No SELinux/AppArmor/DAC relabelling: QEMU runs as the launcher's own user
# and the pod's files already belong to it.
security_driver = "none"
dynamic_ownership = 0
remember_owner = 0
user = "+%d"
group = "+%d"
`, uid, gid)
	if uid == 0 {
		conf += fmt.Sprintf(`# swtpm as root too, not as tss, which cannot write this root.
swtpm_user = "+%d"
swtpm_group = "+%d"
`, uid, gid)
	}
	return conf
}

// PrepareEmbedRoot creates the embedded driver's root with its qemu.conf.
// SeedCapabilities then spares it probing QEMU.
func PrepareEmbedRoot(root string) error {
	etc := filepath.Join(root, "etc")
	if err := os.MkdirAll(etc, 0o700); err != nil {
		return fmt.Errorf("create embedded libvirt root: %w", err)
	}
	conf := QEMUConf(os.Getuid(), os.Getgid())
	if err := os.WriteFile(filepath.Join(etc, "qemu.conf"), []byte(conf), 0o600); err != nil {
		return fmt.Errorf("write qemu.conf: %w", err)
	}
	if os.Geteuid() != 0 {
		// Unprivileged, libvirt still keeps a few things in the user's XDG
		// directories, and a pod's user has no writable home: keep them
		// in the root too. This is process-wide, as libvirt is.
		for env, dir := range map[string]string{"XDG_CACHE_HOME": "xdg-cache", "XDG_CONFIG_HOME": "xdg-config", "XDG_RUNTIME_DIR": "xdg-run"} {
			path := filepath.Join(root, dir)
			if err := os.MkdirAll(path, 0o700); err != nil {
				return fmt.Errorf("create embedded libvirt root: %w", err)
			}
			if err := os.Setenv(env, path); err != nil {
				return fmt.Errorf("set %s: %w", env, err)
			}
		}
	}
	return nil
}

// capsCacheDir is where the embedded driver caches QEMU's capabilities.
func capsCacheDir(root string) string {
	return filepath.Join(root, "cache", "qemu", "capabilities")
}
