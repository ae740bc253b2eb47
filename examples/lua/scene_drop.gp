# scene_drop.gp: gnuplot -e "data='DIR'; out='PNG'" scene_drop.gp (scene_drop.lua runs it)
set datafile separator ','
set terminal pngcairo size 900,560 font ',11'
set output out
set title 'Boxes dropped from 1 m in scene mode: height of the bottom face'
set xlabel 'time (s)'
set ylabel 'height (m)'
set grid
set key top right
plot data.'/scene_drop.csv' using 1:2 with lines lw 2 lc rgb '#1f78b4' title 'restitution 0', \
     '' using 1:3 with lines lw 2 lc rgb '#33a02c' title 'restitution 0.5', \
     '' using 1:4 with lines lw 2 lc rgb '#e31a1c' title 'restitution 0.8'
