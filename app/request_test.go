package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestParseCardiacRequest(t *testing.T) {
	img := base64.StdEncoding.EncodeToString([]byte("\x89PNG....."))
	raw := base64.RawStdEncoding.EncodeToString([]byte("\x89PNG....."))
	big := base64.StdEncoding.EncodeToString(make([]byte, MaxImageBytes+1))
	eleven := `["` + strings.Repeat(img+`","`, 10) + img + `"]`
	for _, tc := range []struct {
		name  string
		body  string
		kind  Kind // -1: ok
		batch bool
		n     int
	}{
		{"single", `{"image":"` + img + `"}`, -1, false, 1},
		{"unpadded", `{"image":"` + raw + `"}`, -1, false, 1},
		{"data url", `{"image":"data:image/png;base64,` + img + `"}`, -1, false, 1},
		{"batch", `{"images":["` + img + `","` + img + `"],"uuid":"x","render":true}`, -1, true, 2},
		{"v2 fields ignored", `{"image":"` + img + `","include_render":true,"extended_run":1}`, -1, false, 1},
		{"empty object", `{}`, KindInvalid, false, 0},
		{"not json", `{`, KindInvalid, false, 0},
		{"array", `[]`, KindInvalid, false, 0},
		{"trailing", `{"image":"` + img + `"} {}`, KindInvalid, false, 0},
		{"both", `{"image":"` + img + `","images":["` + img + `"]}`, KindInvalid, false, 0},
		{"image number", `{"image":5}`, KindInvalid, false, 0},
		{"empty image", `{"image":""}`, KindInvalid, false, 0},
		{"bad base64", `{"image":"!!!"}`, KindInvalid, false, 0},
		{"images empty", `{"images":[]}`, KindInvalid, false, 0},
		{"eleven images", `{"images":` + eleven + `}`, KindInvalid, false, 0},
		{"images not strings", `{"images":[1]}`, KindInvalid, false, 0},
		{"uuid number", `{"image":"` + img + `","uuid":7}`, KindInvalid, false, 0},
		{"uuid too long", `{"image":"` + img + `","uuid":"` + strings.Repeat("u", 257) + `"}`, KindInvalid, false, 0},
		{"render string", `{"image":"` + img + `","render":"yes"}`, KindInvalid, false, 0},
		{"too large", `{"image":"` + big + `"}`, KindTooLarge, false, 0},
		{"too large in batch", `{"images":["` + img + `","` + big + `"]}`, KindTooLarge, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseCardiacRequest([]byte(tc.body), true)
			if tc.kind >= 0 {
				if err == nil || KindOf(err) != tc.kind {
					t.Fatalf("err %v (kind %d), want kind %d", err, KindOf(err), tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Batch != tc.batch || len(req.Images) != tc.n {
				t.Fatalf("%+v", req)
			}
		})
	}
	// Lenient (stream) mode keeps the request and reports the bad image.
	req, err := ParseCardiacRequest([]byte(`{"images":["`+img+`","!!"]}`), false)
	if err != nil || req.ImageErrs[1] == nil || req.ImageErrs[0] != nil {
		t.Fatalf("lenient: %+v %v", req, err)
	}
}

func FuzzParseCardiacRequest(f *testing.F) {
	img := base64.StdEncoding.EncodeToString(codeImage(f, 1))
	for _, s := range []string{`{"image":"` + img + `"}`, `{"images":["` + img + `","x"],"uuid":"a"}`, `{}`, `[`, `{"image":null,"render":true}`, `{"image":"data:;base64,AAAA"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, strict := range []bool{true, false} {
			req, err := ParseCardiacRequest(body, strict)
			if err != nil {
				if KindOf(err) != KindInvalid && KindOf(err) != KindTooLarge {
					t.Fatalf("unexpected kind %d: %v", KindOf(err), err)
				}
				continue
			}
			if len(req.Images) == 0 || len(req.Images) > MaxBatchImages || len(req.UUID) > MaxUUIDBytes {
				t.Fatalf("accepted invalid request %+v", req)
			}
			for i, b := range req.Images {
				if len(b) > MaxImageBytes || (len(b) == 0 && (strict || req.ImageErrs[i] == nil)) {
					t.Fatalf("image %d: %d bytes", i, len(b))
				}
				// The image path after base64 must never panic.
				_, _ = DecodeImage(b)
			}
		}
	})
}

func TestKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	key, info, err := s.CreateKey(ctx, "Clinic A", "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Tier != "paygo" || info.Status != "active" || PrefixOf(key) != info.Prefix {
		t.Fatalf("%+v %q", info, key)
	}
	ks, _ := s.Store().Keys().List(ctx)
	if len(ks) != 1 || strings.Contains(fmt.Sprint(ks[0]), key[12:]) {
		t.Fatalf("stored key leaks secret: %+v", ks)
	}
	c, err := s.Authenticate(ctx, key)
	if err != nil || c.Customer != "Clinic A" || c.KeyPrefix != info.Prefix {
		t.Fatalf("%+v %v", c, err)
	}
	forged := key[:len(key)-1] + string("AB"[strings.IndexByte("AB", key[len(key)-1])+1&1])
	for _, bad := range []string{"x", "vl_zzzzzzzz_abc", key + "x", forged, "vl_00000000_" + key[12:]} {
		if _, err := s.Authenticate(ctx, bad); err != ErrInvalidKey {
			t.Errorf("Authenticate(%q) = %v, want ErrInvalidKey", bad, err)
		}
	}
	if _, err := s.Authenticate(ctx, ""); err != ErrMissingKey {
		t.Errorf("empty key: %v", err)
	}
	if _, err := s.RevokeKey(ctx, info.Prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, key); err != ErrInvalidKey {
		t.Fatalf("revoked key authenticates: %v", err)
	}
	if _, err := s.RevokeKey(ctx, "nope"); KindOf(err) != KindNotFound {
		t.Fatalf("revoke unknown: %v", err)
	}
	if _, _, err := s.CreateKey(ctx, "x", "gold"); KindOf(err) != KindInvalid {
		t.Fatalf("bad tier: %v", err)
	}
	l, _ := s.ListKeys(ctx)
	if len(l) != 1 || l[0].Status != "revoked" {
		t.Fatalf("%+v", l)
	}
}

func TestSummarize(t *testing.T) {
	res := func(code int, spread float64, vhs float64) *cardiacResult {
		r := syntheticResult(cardiacCode(code))
		r.Spread = spread
		if r.VHS != nil {
			r.VHS = &vhs
		}
		return r
	}
	sum := summarize([]*cardiacResult{res(6, 0, 0), res(2, 0.006, 10.0), res(1, 0.009, 9.0), res(1, 0.004, 9.4), nil, res(4, 0.001, 11)})
	if *sum.BestPhotoIndex != 3 || *sum.BestVHS != 9.4 || sum.NPhotosProcessed != 5 || sum.NPhotosWithLandmarks != 4 {
		t.Fatalf("%+v", sum)
	}
	// VHS values 10, 9, 9.4, 11: median 9.7, std 0.753 > 0.3 lowers the
	// median spread's level (0.005: good) to review.
	if *sum.MedianVHS != 9.7 || *sum.VHSStd != 0.753 || sum.VHSConfidence != "review" {
		t.Fatalf("vhs: median %v std %v conf %s", *sum.MedianVHS, *sum.VHSStd, sum.VHSConfidence)
	}
	// VLAS 2, 2, 2 (code 4 has none): std 0, median spread 0.006 good.
	if *sum.BestVLAS != 2 || *sum.VLASStd != 0 || sum.VLASConfidence != "good" {
		t.Fatalf("vlas: %+v", sum)
	}
	none := summarize([]*cardiacResult{res(6, 0, 0), res(5, 0.01, 0)})
	if none.BestPhotoIndex != nil || none.BestVHS != nil || none.VHSStd != nil || none.VHSConfidence != "review" || none.NPhotosWithLandmarks != 0 {
		t.Fatalf("%+v", none)
	}
	b, _ := json.Marshal(none)
	if !strings.Contains(string(b), `"best_photo_index":null`) {
		t.Fatal(string(b))
	}
}
