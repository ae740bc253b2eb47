# Solve time per world against rows x DOFs per row (the sum, over a world's rows, of the DOFs each
# row touches), 20 sweeps, 1 thread, one copy of each scene. Made by bench/peers/run.sh:
#   gnuplot -e "data='build-peers/peers_plot.dat'; out='bench/peers/cost_vs_row_dofs.png'" bench/peers/cost_vs_row_dofs.gp
set terminal pngcairo size 900,600 noenhanced
set output out
set logscale xy
set grid
set key top left
set xlabel "rows x DOFs per row, per world"
set ylabel "solve time per world, us (20 sweeps, 1 thread)"
set title "Constraint solve cost against problem size (one copy of each scene)"
plot data index 0 using 1:2 with linespoints pt 7 title "Steel (steel_batch_solve)", \
     data index 1 using 1:2 with linespoints pt 5 title "ODE (dWorldQuickStep, whole step)", \
     data index 2 using 1:2 with linespoints pt 9 title "Bullet (sweeps + finish)", \
     data index 3 using 1:2 with linespoints pt 11 title "MuJoCo (mj_fwdConstraint)", \
     data index 0 using 1:2:3 with labels offset 0,1 font ",8" notitle
