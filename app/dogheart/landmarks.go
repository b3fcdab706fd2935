package dogheart

import "vetlens/engine/cardiac"

// Landmarks places six_points in the cardiac spec's class order
// (SpecOrder). The VLAS point, which DogHeart labels lack, stays at zero.
func Landmarks(six [6][2]float64) cardiac.Landmarks {
	var l cardiac.Landmarks
	for i, k := range SpecOrder {
		l[k] = cardiac.Point{X: six[i][0], Y: six[i][1]}
	}
	return l
}

// SixPoints is l as DogHeart's six_points: the VLAS point is dropped.
func SixPoints(l cardiac.Landmarks) [6][2]float64 {
	var six [6][2]float64
	for i, k := range SpecOrder {
		six[i] = [2]float64{l[k].X, l[k].Y}
	}
	return six
}
