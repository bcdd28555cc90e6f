package overhead

import (
	"strings"
	"testing"
)

// Regions as a TCG QEMU with a 128 MiB guest has them (abridged).
const smaps = `5556724e7000-5556728ee000 r--p 00000000 00:83 1074397                    /usr/bin/qemu-system-x86_64
Size:               4124 kB
Rss:                4124 kB
55567e6d7000-55567fa75000 rw-p 00000000 00:00 0                          [heap]
Size:              20088 kB
Rss:                4728 kB
7f3cf7e00000-7f3cffe00000 rw-p 00000000 00:00 0 
Size:             131072 kB
Rss:              116736 kB
7f3d00000000-7f3d3ffff000 rwxp 00000000 00:00 0 
Size:            1048572 kB
Rss:               47104 kB
VmFlags: rd wr ex mr mw me ac 
`

func TestSplitFindsGuestRAMAndTCGBuffer(t *testing.T) {
	maps, err := parseSmaps(strings.NewReader(smaps))
	if err != nil {
		t.Fatal(err)
	}
	s, err := split(maps, 128<<20)
	if err != nil {
		t.Fatal(err)
	}
	if s.GuestRAM != 116736<<10 || s.TCG != 47104<<10 || s.Own != (4124+4728)<<10 {
		t.Fatalf("split %+v", s)
	}
	if _, err := split(maps, 256<<20); err == nil {
		t.Fatal("a guest size with no mapping of its own was accepted")
	}
}
