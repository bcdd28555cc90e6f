// Package podusr runs the bench's host-side launcher and libvirt processes
// as a launcher pod runs them: as the pods' user, with no capabilities.
// libvirt's daemon and its remote client look that user up, and uid 107
// has no entry on the host (the launcher image has one): a command runs in
// a mount namespace of its own where a directory's passwd and group files,
// which have it, are bind-mounted over /etc's.
package podusr

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// UID is the user (and group) launcher pods run as (virt-controller's
// default).
const UID = 107

// Command runs argv as UID with no capabilities, with dir's passwd and
// group files (WriteUserFiles) in place of /etc's.
func Command(dir string, argv ...string) *exec.Cmd {
	script := `mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"`
	return exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script, "sh",
		filepath.Join(dir, "passwd"), filepath.Join(dir, "group"),
		"setpriv", fmt.Sprintf("--reuid=%d", UID), fmt.Sprintf("--regid=%d", UID), "--clear-groups",
		"--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"}, argv...)...)
}

// WriteUserFiles writes into dir the host's passwd and group files with
// the pods' user added.
func WriteUserFiles(dir string) error {
	for _, f := range []struct{ name, line string }{
		{"passwd", fmt.Sprintf("virt-launcher:x:%d:%d::/nonexistent:/usr/sbin/nologin\n", UID, UID)},
		{"group", fmt.Sprintf("virt-launcher:x:%d:\n", UID)},
	} {
		b, err := os.ReadFile(filepath.Join("/etc", f.name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), append(b, f.line...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Chown gives everything below dir (the bench's own temporary directory)
// to the pods' user.
func Chown(dir string) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, UID, UID)
	})
}
