package cardiacv3

import "encoding/base64"

// CornerOrder is the order of the corners in the bodies below.
const CornerOrder = "TL,TR,BR,BL"

// Corners is the /v3/corners body.
type Corners struct {
	Corners      [4][2]float64 `json:"corners"`
	Order        string        `json:"order"`
	ImageWidth   int           `json:"image_width"`
	ImageHeight  int           `json:"image_height"`
	ModelVersion string        `json:"model_version"`
}

// NewCorners is the /v3/corners body of the corners (pixels, TL, TR, BR,
// BL) found on a width x height image.
func NewCorners(corners [4][2]float64, width, height int, modelVersion string) Corners {
	return Corners{Corners: corners, Order: CornerOrder, ImageWidth: width, ImageHeight: height, ModelVersion: modelVersion}
}

// Rectified is the /v3/rectify body; /v3/preprocess adds corners and order.
type Rectified struct {
	RectifiedImage string         `json:"rectified_image"`
	Corners        *[4][2]float64 `json:"corners,omitempty"`
	Order          string         `json:"order,omitempty"`
	Width          int            `json:"width"`
	Height         int            `json:"height"`
	ModelVersion   string         `json:"model_version"`
}

// NewRectified is the /v3/rectify body of a rectified JPEG of width x
// height (rectified_image its base64, "" for none), and the
// /v3/preprocess body when corners (the corners found) is set.
func NewRectified(jpeg []byte, corners *[4][2]float64, width, height int, modelVersion string) Rectified {
	r := Rectified{RectifiedImage: base64.StdEncoding.EncodeToString(jpeg), Corners: corners, Width: width, Height: height, ModelVersion: modelVersion}
	if corners != nil {
		r.Order = CornerOrder
	}
	return r
}
