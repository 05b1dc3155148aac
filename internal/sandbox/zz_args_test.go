package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestZZArgs(t *testing.T) {
	home := os.Getenv("ZZHOME")
	if home == "" {
		t.Skip()
	}
	p := &Policy{ABI: 7, Hide: HiddenIn(home, nil)}
	p.AddWrite(os.Getenv("ZZWORK"))
	p.AddWrite(Devices...)
	args, _ := LauncherArgs(p, 3, "/usr/bin/true", []string{"true"})
	f, _ := os.Create(filepath.Join("/tmp/lc", "args"))
	for _, a := range args[1:] {
		f.WriteString(a + "\x00")
	}
	f.Close()
}
