package pop

import (
	"testing"

	"gocv.io/x/gocv"
)

// TestGrayView: a view reads the Mat's own memory, so it sees a later
// write; a copy does not.
func TestGrayView(t *testing.T) {
	m := gocv.NewMatWithSize(4, 5, gocv.MatTypeCV8UC1)
	defer m.Close()
	v, err := grayView(m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := grayOf(m)
	if err != nil {
		t.Fatal(err)
	}
	m.SetUCharAt(2, 3, 200)
	if v.w != 5 || v.h != 4 || v.at(3, 2) != 200 {
		t.Fatalf("view %dx%d reads %v at (3, 2), want 5x4 and 200", v.w, v.h, v.at(3, 2))
	}
	if c.at(3, 2) == 200 {
		t.Fatal("the copy changed with the Mat")
	}
	if _, err := grayView(gocv.NewMatWithSize(2, 2, gocv.MatTypeCV8UC3)); err == nil {
		t.Fatal("a colour Mat viewed as grey")
	}
}
