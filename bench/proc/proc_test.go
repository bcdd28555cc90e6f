package proc_test

import (
	"os"
	"testing"

	"kubevirt.dev/virt/bench/proc"
)

func TestRSSOfSelf(t *testing.T) {
	rss, err := proc.RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < proc.MiB || rss > 4096*proc.MiB {
		t.Fatalf("RSS %d bytes is not believable", rss)
	}
	if proc.Comm(os.Getpid()) == "" {
		t.Fatal("no comm")
	}
}

func TestCPUOfSelfGrows(t *testing.T) {
	a, err := proc.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 300_000_000 {
		x += i
	}
	_ = x
	b, err := proc.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if b <= a {
		t.Fatalf("CPU did not grow: %v then %v", a, b)
	}
}
