package app

// Canine reference ranges the desktop and reports show beside the values
// (lateral VHS 8.5-10.5 vertebrae; VLAS below 2.5: Buchanan and Bücheler
// 1995; Malcolm et al. 2018).
const (
	VHSNormalLow  = 8.5
	VHSNormalHigh = 10.5
	VLASNormalMax = 2.5
)

// Reading puts VHS and VLAS in plain words against the canine reference
// ranges; nil values were not measured.
func Reading(vhs, vlas *float64) string {
	var s string
	switch {
	case vhs == nil:
		return "No heart size could be measured on this image."
	case *vhs > VHSNormalHigh:
		s = "The heart is larger than normal (VHS above 10.5), consistent with cardiomegaly."
	case *vhs < VHSNormalLow:
		s = "The heart is smaller than the usual range (VHS below 8.5)."
	default:
		s = "The heart size is within the normal range."
	}
	switch {
	case vlas == nil:
		s += " The left atrium could not be measured."
	case *vlas >= VLASNormalMax:
		s += " The left atrium appears enlarged (VLAS 2.5 or more)."
	default:
		s += " The left atrium size is normal."
	}
	return s
}
