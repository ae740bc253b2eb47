# cfm_regularization.gp: gnuplot -e "data='DIR'; out='PNG'" cfm_regularization.gp
# (cfm_regularization.lua runs it)
set datafile separator ','
set terminal pngcairo size 1500,520 font ',11'
set output out
set multiplot layout 1,3 title '10-box stack: cfm relaxes the sweep, regularization softens the contacts'
set grid

set title 'cfm: slower, same fixed point'
set logscale y
set format y '10^{%L}'
set xlabel 'sweep'
set ylabel 'sweep residual (m/s)'
set key bottom left
plot for [i=2:5] data.'/cfm_residuals.csv' using 1:i with lines lw 2 title columnheader(i)

set title 'contact regularization c: faster, to another answer'
set key top right
plot for [i=2:5] data.'/regularization_residuals.csv' using 1:i with lines lw 2 title columnheader(i)

set title 'converged impulse / rigid closed form'
set logscale x
set xlabel 'cfm or c (c = 0 not shown on the log axis)'
set ylabel 'impulse / (g dt sum m)'
set key bottom left font ',10' 
plot data.'/converged_answer.csv' using 1:2 with linespoints lw 2 pt 7 title 'cfm: bottom contact', \
     '' using 1:3 with linespoints lw 2 pt 5 title 'cfm: top contact', \
     '' using 1:4 with points pt 6 ps 1.8 title 'c: bottom contact', \
     '' using 1:5 with points pt 4 ps 1.8 title 'c: top contact', \
     '' using 1:6 with lines dt 2 lc 'gray' title '(A + cI)^{-1}(-J v-hat)', \
     '' using 1:7 with lines dt 2 lc 'gray' notitle
unset multiplot
