package hypervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// The QEMU capabilities seed.
//
// libvirt caches what it learnt probing a QEMU binary (seconds of work) in
// one XML file per binary under the root's cache/qemu/capabilities, and
// trusts an entry only while the binary's ctime (<qemuctime>), the ctime of
// libvirt's own QEMU driver module (<selfctime>), libvirt's version, the
// kernel, the microcode and the host CPU are those of the probe. A launcher
// image carries such entries, probed when the image was built
// (WriteCapabilitiesSeed, run by hack/cluster/images.sh), read-only: no
// launcher writes anything another launcher reads.
//
// ctime cannot travel in an image: the container runtime sets every file's
// ctime when it unpacks the layer on a node, so the seed's ctimes never
// match as they are. They stand for "this binary is the one that was
// probed", and the seed proves that in a way that survives unpacking: its
// manifest records each such file's size and mtime (which a layer keeps).
// SeedCapabilities puts the unpacked files' ctimes into an entry only when
// every recorded file still has its recorded size and mtime; otherwise it
// leaves the entry as it is and libvirt, finding the ctimes wrong, probes
// afresh. Everything else libvirt checks (kernel, CPU, versions) it still
// checks: a seed probed on another kind of node is just re-probed.

// SeedManifestName is the seed's manifest (seedManifest, JSON) beside its
// entries.
const SeedManifestName = "seed.json"

// maxSeedEntry bounds what is read of one seed file: an entry is ~100 KiB.
const maxSeedEntry = 4 << 20

type seedManifest struct {
	// Files are the size and mtime, at probe time, of each emulator an
	// entry names and of Self.
	Files map[string]fileStamp `json:"files"`
	// Self is the file whose ctime libvirt records as <selfctime>: its
	// QEMU driver module (measured with libvirt 9.0: changing the ctime
	// of libvirt.so.0 keeps the entry valid, that of the module does not).
	Self string `json:"self"`
	// Daemon is libvirtd, when the image has it. A private libvirtd
	// (StartDaemon) records the later of its own binary's ctime and
	// Self's as <selfctime> (measured with libvirt 9.0: the daemon's one
	// second younger than the module made every target re-probe QEMU,
	// 0.9 s of a migration's target start).
	Daemon string `json:"daemon,omitempty"`
}

type fileStamp struct {
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime"`
}

var (
	emulatorRE  = regexp.MustCompile(`<emulator>([^<]+)</emulator>`)
	qemuCtimeRE = regexp.MustCompile(`<qemuctime>[0-9]+</qemuctime>`)
	selfCtimeRE = regexp.MustCompile(`<selfctime>[0-9]+</selfctime>`)
)

// driverModuleGlobs are where Debian and Fedora-like systems keep libvirt's
// QEMU driver module.
var driverModuleGlobs = []string{
	"/usr/lib/*/libvirt/connection-driver/libvirt_driver_qemu.so",
	"/usr/lib64/libvirt/connection-driver/libvirt_driver_qemu.so",
	"/usr/lib/libvirt/connection-driver/libvirt_driver_qemu.so",
}

// driverModule returns the path of libvirt's QEMU driver module, "" when
// none is found.
func driverModule() string {
	if dir := os.Getenv("LIBVIRT_DRIVER_DIR"); dir != "" {
		return filepath.Join(dir, "libvirt_driver_qemu.so")
	}
	for _, g := range driverModuleGlobs {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

func stampOf(path string) (fileStamp, syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileStamp{}, st, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileStamp{Size: st.Size, MTime: st.Mtim.Sec}, st, nil
}

// WriteCapabilitiesSeed copies the entries libvirt cached in root to dir
// with a manifest of the files they depend on, and returns how many entries
// it wrote. It is how a launcher image gets its seed: run once, as the
// launcher's user, in the image's file system.
func WriteCapabilitiesSeed(root, dir string) (int, error) {
	m := seedManifest{Files: map[string]fileStamp{}, Self: driverModule()}
	if m.Self == "" {
		return 0, errors.New("libvirt's QEMU driver module not found")
	}
	if stamp, _, err := stampOf(DaemonBinary); err == nil {
		m.Daemon, m.Files[DaemonBinary] = DaemonBinary, stamp
	}
	entries, err := xmlFiles(capsCacheDir(root))
	if err != nil {
		return 0, err
	}
	if len(entries) == 0 {
		return 0, fmt.Errorf("libvirt cached no QEMU capabilities in %s", root)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	for _, name := range entries {
		data, err := readBounded(filepath.Join(capsCacheDir(root), name))
		if err != nil {
			return 0, err
		}
		emu := emulatorRE.FindSubmatch(data)
		if emu == nil {
			return 0, fmt.Errorf("capabilities entry %s names no emulator", name)
		}
		for _, p := range []string{string(emu[1]), m.Self} {
			if m.Files[p], _, err = stampOf(p); err != nil {
				return 0, err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return 0, err
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, err
	}
	return len(entries), os.WriteFile(filepath.Join(dir, SeedManifestName), append(b, '\n'), 0o644)
}

// Seeded is what SeedCapabilities put into a root.
type Seeded struct {
	// Copied entries, and of them those Vouched for (their ctimes set).
	Copied, Vouched int
	cacheDir        string
	entries         map[string][]byte
}

// Kept counts the seeded entries libvirt still has as they were seeded:
// after libvirt's first use of the root, an entry it found stale has been
// probed afresh and rewritten.
func (s Seeded) Kept() int {
	kept := 0
	for name, data := range s.entries {
		if now, err := readBounded(filepath.Join(s.cacheDir, name)); err == nil && string(now) == string(data) {
			kept++
		}
	}
	return kept
}

// SeedCapabilities copies the seed's entries into the capabilities cache of
// the embedded root, with the ctimes of this file system where the
// manifest proves the files are those probed. A seed that is missing, or
// has no manifest, is no error (libvirt then probes).
func SeedCapabilities(seed, root string) (Seeded, error) {
	return seedCache(seed, capsCacheDir(root), "")
}

// seedCache seeds the capabilities cache cacheDir; daemon is the libvirtd
// binary that will read it, "" for the embedded driver.
func seedCache(seed, cacheDir, daemon string) (Seeded, error) {
	res := Seeded{cacheDir: cacheDir, entries: map[string][]byte{}}
	copied, vouched, err := seedCapabilities(seed, cacheDir, res.entries, daemon)
	res.Copied, res.Vouched = copied, vouched
	return res, err
}

func seedCapabilities(seed, cacheDir string, written map[string][]byte, daemon string) (copied, vouched int, err error) {
	entries, err := xmlFiles(seed)
	if err != nil || len(entries) == 0 {
		return 0, 0, err
	}
	var m seedManifest
	if b, err := readBounded(filepath.Join(seed, SeedManifestName)); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			return 0, 0, fmt.Errorf("capabilities seed manifest: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, 0, err
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return 0, 0, fmt.Errorf("create capabilities cache: %w", err)
	}
	for _, name := range entries {
		data, err := readBounded(filepath.Join(seed, name))
		if err != nil {
			return copied, vouched, err
		}
		if out, ok := m.rebase(data, daemon); ok {
			data = out
			vouched++
		}
		if err := os.WriteFile(filepath.Join(cacheDir, name), data, 0o600); err != nil {
			return copied, vouched, fmt.Errorf("write capabilities cache: %w", err)
		}
		written[name] = data
		copied++
	}
	return copied, vouched, nil
}

// rebase returns the entry with the ctimes of its emulator and of libvirt
// on this file system, if they are the files the manifest recorded. daemon
// is the libvirtd binary that reads the entry ("" for the embedded driver),
// whose ctime counts in <selfctime> too.
func (m *seedManifest) rebase(entry []byte, daemon string) ([]byte, bool) {
	emu := emulatorRE.FindSubmatch(entry)
	if emu == nil || m.Self == "" {
		return nil, false
	}
	if daemon != "" && daemon != m.Daemon {
		return nil, false
	}
	ctimes := map[string]int64{}
	for _, p := range []string{string(emu[1]), m.Self, daemon} {
		if p == "" {
			continue
		}
		want, ok := m.Files[p]
		got, st, err := stampOf(p)
		if !ok || err != nil || got != want {
			return nil, false
		}
		ctimes[p] = st.Ctim.Sec
	}
	if len(qemuCtimeRE.FindAll(entry, -1)) != 1 || len(selfCtimeRE.FindAll(entry, -1)) != 1 {
		return nil, false
	}
	self := max(ctimes[m.Self], ctimes[daemon])
	out := qemuCtimeRE.ReplaceAll(entry, []byte("<qemuctime>"+strconv.FormatInt(ctimes[string(emu[1])], 10)+"</qemuctime>"))
	out = selfCtimeRE.ReplaceAll(out, []byte("<selfctime>"+strconv.FormatInt(self, 10)+"</selfctime>"))
	return out, true
}

// xmlFiles lists the regular *.xml files of dir; a missing dir has none.
func xmlFiles(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read capabilities cache %s: %w", dir, err)
	}
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() && strings.HasSuffix(de.Name(), ".xml") {
			names = append(names, de.Name())
		}
	}
	return names, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSeedEntry+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSeedEntry {
		return nil, fmt.Errorf("%s: more than %d bytes", path, maxSeedEntry)
	}
	return b, nil
}
