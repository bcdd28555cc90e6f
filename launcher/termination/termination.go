package termination

import "os"

// Path is the kubelet's default terminationMessagePath; a variable so tests
// can redirect it.
var Path = "/dev/termination-log"

// Write records msg as the termination message. Outside a container the file
// does not exist and nothing is written: the message is also logged anyway.
func Write(msg string) {
	f, err := os.OpenFile(Path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(msg)
}
