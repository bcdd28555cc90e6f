package hostpath

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

type prepareCase struct {
	name string
	// setup makes the path's state before Prepare and returns the path.
	setup   func(t *testing.T, dir string) string
	owner   Owner
	want    Result
	wantErr string
}

func TestPrepare(t *testing.T) {
	self := Owner{UID: os.Getuid(), GID: os.Getgid()}
	tests := []prepareCase{
		{
			name:  "missing, parents too",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b", "cache") },
			owner: self,
			want:  Result{Created: true, Chmoded: true},
		},
		{
			name: "as the kubelet creates it (0755)",
			setup: func(t *testing.T, dir string) string {
				return mkdir(t, filepath.Join(dir, "cache"), 0o755)
			},
			owner: self,
			want:  Result{Chmoded: true},
		},
		{
			name: "already prepared: nothing changes",
			setup: func(t *testing.T, dir string) string {
				return mkdir(t, filepath.Join(dir, "cache"), 0o700)
			},
			owner: self,
		},
		{
			name: "setgid bit dropped",
			setup: func(t *testing.T, dir string) string {
				p := mkdir(t, filepath.Join(dir, "cache"), 0o700)
				if err := os.Chmod(p, 0o700|fs.ModeSetgid); err != nil {
					t.Fatal(err)
				}
				return p
			},
			owner: self,
			want:  Result{Chmoded: true},
		},
		{
			name: "a symlink to a directory is refused",
			setup: func(t *testing.T, dir string) string {
				target := mkdir(t, filepath.Join(dir, "elsewhere"), 0o755)
				link := filepath.Join(dir, "cache")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				return link
			},
			owner:   self,
			wantErr: "not a directory",
		},
		{
			name: "a file is refused",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "cache")
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			owner:   self,
			wantErr: "not a directory",
		},
	}
	if os.Geteuid() == 0 {
		// Handing the directory to another user, as virt-handler does, and
		// fixing its mode afterwards; needs CAP_CHOWN and CAP_FOWNER.
		tests = append(tests, prepareCase{
			name: "root's 0755 handed to 107 (root only)",
			setup: func(t *testing.T, dir string) string {
				return mkdir(t, filepath.Join(dir, "cache"), 0o755)
			},
			owner: Owner{UID: 107, GID: 107},
			want:  Result{Chmoded: true, Chowned: true},
		}, prepareCase{
			name: "107's, mode changed by someone (root only)",
			setup: func(t *testing.T, dir string) string {
				p := mkdir(t, filepath.Join(dir, "cache"), 0o777)
				if err := os.Chown(p, 107, 107); err != nil {
					t.Fatal(err)
				}
				return p
			},
			owner: Owner{UID: 107, GID: 107},
			want:  Result{Chmoded: true},
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t, t.TempDir())
			got, err := Prepare(dir, tt.owner, 0o700)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Prepare(%s) = %v, want an error about %q", dir, err, tt.wantErr)
				}
				if st, lerr := os.Lstat(dir); lerr == nil && st.IsDir() && st.Mode().Perm() != 0o755 {
					t.Errorf("%s refused but changed to %v", dir, st.Mode())
				}
				return
			}
			if err != nil {
				t.Fatalf("Prepare(%s) = %v", dir, err)
			}
			if got != tt.want {
				t.Errorf("Prepare(%s) = %+v, want %+v", dir, got, tt.want)
			}
			st, err := os.Lstat(dir)
			if err != nil {
				t.Fatal(err)
			}
			sys := st.Sys().(*syscall.Stat_t)
			if !st.IsDir() || st.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0o700 ||
				int(sys.Uid) != tt.owner.UID || int(sys.Gid) != tt.owner.GID {
				t.Errorf("%s is %v %d:%d, want a directory 0700 %d:%d", dir, st.Mode(), sys.Uid, sys.Gid, tt.owner.UID, tt.owner.GID)
			}
		})
	}
}

func mkdir(t *testing.T, p string, perm fs.FileMode) string {
	t.Helper()
	if err := os.Mkdir(p, perm); err != nil {
		t.Fatal(err)
	}
	// Mkdir's mode is filtered by the umask.
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}
