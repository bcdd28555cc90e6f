package nocloud

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdomanski/iso9660"
)

func TestWriteReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol", "nocloud.iso")
	want := map[string]string{
		"user-data":      "#cloud-config\npassword: secret\n",
		"meta-data":      MetaData("6a1f3c52", "testvm"),
		"network-config": "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n",
	}
	if err := Write(path, Data{UserData: want["user-data"], MetaData: want["meta-data"], NetworkConfig: want["network-config"]}); err != nil {
		t.Fatal(err)
	}
	got := readISO(t, path)
	for name, content := range want {
		if got[name] != content {
			t.Errorf("%s = %q, want %q", name, got[name], content)
		}
	}
	if len(got) != len(want)+1 { // +label
		t.Errorf("ISO holds %v, want exactly %v", got, want)
	}
	if got["label"] != VolumeLabel {
		t.Errorf("volume label = %q, want %q", got["label"], VolumeLabel)
	}
}

func TestWriteWithoutNetworkConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nocloud.iso")
	if err := Write(path, Data{UserData: "#!/bin/sh\n", MetaData: MetaData("i", "h")}); err != nil {
		t.Fatal(err)
	}
	got := readISO(t, path)
	if _, ok := got["network-config"]; ok {
		t.Errorf("network-config written although empty")
	}
	if got["meta-data"] != "instance-id: i\nlocal-hostname: h\n" {
		t.Errorf("meta-data = %q", got["meta-data"])
	}
}

// readISO returns the files of the ISO's root as Linux's isofs names them
// (lower case, version suffix stripped), plus "label".
func readISO(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := iso9660.OpenImage(f)
	if err != nil {
		t.Fatalf("not an ISO 9660 image: %v", err)
	}
	out := map[string]string{}
	if out["label"], err = img.Label(); err != nil {
		t.Fatal(err)
	}
	root, err := img.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	children, err := root.GetChildren()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		b, err := io.ReadAll(c.Reader())
		if err != nil {
			t.Fatal(err)
		}
		out[c.Name()] = string(b)
	}
	return out
}

func TestMetaDataPublicKeys(t *testing.T) {
	got := MetaData("i", "h", "ssh-ed25519 AAAA a@b", "ssh-rsa B\"x\nevil: 1")
	want := "instance-id: i\nlocal-hostname: h\npublic-keys:\n  \"0\": \"ssh-ed25519 AAAA a@b\"\n  \"1\": \"ssh-rsa B\\\"x\\nevil: 1\"\n"
	if got != want {
		t.Errorf("MetaData = %q, want %q", got, want)
	}
}
