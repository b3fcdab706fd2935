package cardiacv3

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"vetlens/app/apperr"
)

func kindOf(err error) (apperr.Kind, bool) {
	var e *apperr.Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return apperr.KindInternal, false
}

func TestParseImageRequest(t *testing.T) {
	img := base64.StdEncoding.EncodeToString([]byte("\x89PNG..."))
	big := base64.StdEncoding.EncodeToString(make([]byte, MaxImageBytes+1))
	huge := base64.StdEncoding.EncodeToString(make([]byte, 2*MaxImageBytes))
	for _, tc := range []struct {
		name, body string
		kind       apperr.Kind // KindInternal: no error
		msg        string
	}{
		{"image", `{"image":"` + img + `"}`, apperr.KindInternal, ""},
		{"data url", `{"image":"data:image/png;base64,` + img + `"}`, apperr.KindInternal, ""},
		{"not an object", `[1]`, apperr.KindInvalid, "body must be a JSON object with string fields"},
		{"number image", `{"image":1}`, apperr.KindInvalid, "body must be a JSON object with string fields"},
		{"no image", `{"session_id":"s"}`, apperr.KindInvalid, "image is required"},
		{"empty image", `{"image":""}`, apperr.KindInvalid, "image is empty"},
		{"bad base64", `{"image":"!!!"}`, apperr.KindInvalid, "image is not valid base64"},
		{"one byte too large", `{"image":"` + big + `"}`, apperr.KindTooLarge, "image is 10485761 bytes, exceeds 10485760"},
		{"too large to decode", `{"image":"` + huge + `"}`, apperr.KindTooLarge, "image exceeds 10485760 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, b, err := ParseImageRequest([]byte(tc.body))
			if tc.kind == apperr.KindInternal {
				if err != nil || q == nil || string(b) != "\x89PNG..." {
					t.Fatalf("got %v %q %v", q, b, err)
				}
				return
			}
			if k, ok := kindOf(err); !ok || k != tc.kind || !strings.HasPrefix(err.Error(), tc.msg) {
				t.Fatalf("error %v (kind %v), want kind %v and %q", err, k, tc.kind, tc.msg)
			}
		})
	}
}

func TestCornerPoints(t *testing.T) {
	img := base64.StdEncoding.EncodeToString([]byte("x"))
	for _, tc := range []struct {
		name, corners string
		want          [4][2]float64
		msg           string
	}{
		{"four pairs", `[[1,2],[3,4],[5,6],[7.5,8]]`, [4][2]float64{{1, 2}, {3, 4}, {5, 6}, {7.5, 8}}, ""},
		{"missing", ``, [4][2]float64{}, "corners must be 4 [x, y] pairs (TL, TR, BR, BL)"},
		{"three", `[[1,2],[3,4],[5,6]]`, [4][2]float64{}, "corners must be 4 [x, y] pairs (TL, TR, BR, BL)"},
		{"a triple", `[[1,2],[3,4],[5,6],[7,8,9]]`, [4][2]float64{}, "corners must be 4 [x, y] pairs (TL, TR, BR, BL)"},
		{"huge number", `[[1,2],[3,4],[5,6],[7,1e999]]`, [4][2]float64{}, "corner coordinates must be numbers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"image":"` + img + `"`
			if tc.corners != "" {
				body += `,"corners":` + tc.corners
			}
			q, _, err := ParseImageRequest([]byte(body + "}"))
			if err != nil {
				t.Fatal(err)
			}
			cs, err := q.CornerPoints()
			if tc.msg == "" {
				if err != nil || cs != tc.want {
					t.Fatalf("got %v %v, want %v", cs, err, tc.want)
				}
				return
			}
			if k, _ := kindOf(err); k != apperr.KindInvalid || err.Error() != tc.msg {
				t.Fatalf("error %v, want KindInvalid %q", err, tc.msg)
			}
		})
	}
}

func TestCheckStartRequest(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{"", true}, {"  \n", true}, {"{}", true}, {`{"a":1}`, true},
		{"[]", false}, {"x", false}, {`"s"`, false},
	} {
		err := CheckStartRequest([]byte(tc.body))
		if k, _ := kindOf(err); (err == nil) != tc.ok || (err != nil && (k != apperr.KindInvalid || err.Error() != "body must be a JSON object ({})")) {
			t.Errorf("%q: %v, want ok %v", tc.body, err, tc.ok)
		}
	}
}
