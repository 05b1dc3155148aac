package githubflow

import (
	"reflect"
	"testing"

	"github.com/git-ralph/git-ralph/internal/loop"
)

// TestRemoteHoldsNoLoop: the workflows that only look at a dispatched run (Remote) are
// built from what they use; no *loop.Loop is reachable from their type, so that they
// cannot come to run the loop. Flow, which runs it, holds it by name.
func TestRemoteHoldsNoLoop(t *testing.T) {
	loopType := reflect.TypeFor[loop.Loop]()
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if typ == loopType {
			t.Errorf("%s reaches a loop.Loop", path)
			return
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map, reflect.Chan:
			walk(path, typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("Remote", reflect.TypeFor[Remote]())
	if f, ok := reflect.TypeFor[Flow]().FieldByName("Loop"); !ok || f.Anonymous || f.Type != reflect.PointerTo(loopType) {
		t.Errorf("Flow.Loop is %+v, want a named *loop.Loop field", f)
	}
}
