package overhead

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// mapping is one region of /proc/<pid>/smaps. Read here, not through
// procfs: procfs reads smaps_rollup, the sums, and the split needs each
// region's size, permissions and RSS.
type mapping struct {
	sizeKiB, rssKiB int64
	perms, path     string
}

func readSmaps(pid int) ([]mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSmaps(f)
}

func parseSmaps(r io.Reader) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		// A region's header: "start-end perms offset dev inode [path]".
		if strings.Contains(fields[0], "-") && len(fields) >= 5 && !strings.HasSuffix(fields[0], ":") {
			m := mapping{perms: fields[1]}
			if len(fields) >= 6 {
				m.path = fields[5]
			}
			out = append(out, m)
			continue
		}
		if len(out) == 0 || len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Size:":
			out[len(out)-1].sizeKiB = v
		case "Rss:":
			out[len(out)-1].rssKiB = v
		}
	}
	return out, sc.Err()
}

// QEMUSplit is QEMU's resident memory split into the guest's RAM, the TCG
// translation buffer and the rest (QEMU's own).
type QEMUSplit struct {
	Total, GuestRAM, TCG, Own int64
}

// splitQEMU finds the guest RAM as the anonymous mapping of exactly the
// guest's size and the TCG code buffer as the anonymous executable one
// (QEMU maps it rwx); everything else is QEMU's own.
func splitQEMU(pid int, guestBytes int64) (QEMUSplit, error) {
	maps, err := readSmaps(pid)
	if err != nil {
		return QEMUSplit{}, err
	}
	s, err := split(maps, guestBytes)
	if err != nil {
		return s, fmt.Errorf("QEMU pid %d: %w", pid, err)
	}
	return s, nil
}

func split(maps []mapping, guestBytes int64) (QEMUSplit, error) {
	var s QEMUSplit
	guestKiB := guestBytes >> 10
	guestFound := false
	for _, m := range maps {
		s.Total += m.rssKiB
		anon := m.path == "" || strings.HasPrefix(m.path, "[anon")
		switch {
		case anon && !guestFound && m.sizeKiB == guestKiB:
			s.GuestRAM += m.rssKiB
			guestFound = true
		case anon && strings.Contains(m.perms, "x") && m.sizeKiB >= 16<<10:
			s.TCG += m.rssKiB
		}
	}
	if !guestFound {
		return s, fmt.Errorf("no mapping of the guest's %d KiB in QEMU's smaps", guestKiB)
	}
	s.Total <<= 10
	s.GuestRAM <<= 10
	s.TCG <<= 10
	s.Own = s.Total - s.GuestRAM - s.TCG
	return s, nil
}
