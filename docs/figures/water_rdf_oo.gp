# lieflow plot script (gnuplot >= 5). Re-render with: gnuplot <this file>
# Data and image are found next to this script, whatever the working directory.
if (!exists("ARG0")) ARG0 = ""
scriptdir = ARG0; i = strlen(scriptdir)
while (i > 0 && scriptdir[i:i] ne "/") { i = i - 1 }
scriptdir = (i > 0) ? scriptdir[1:i] : "./"
datafile = scriptdir.'water_rdf_oo.dat'
set terminal pngcairo enhanced size 900,600 font 'Sans,12' linewidth 1
set output scriptdir.(exists("lf_tmp") ? lf_tmp : 'water_rdf_oo.png')
set encoding utf8
set title 'O-O radial distribution of rigid SPC/E water, 512 molecules, NVE 10 ps' noenhanced
set xlabel 'r / A' noenhanced
set ylabel 'g(r)' noenhanced
set grid xtics ytics lt 1 lw 1 lc rgb '#dcdcdc'
set datafile commentschars '#'
set key top right spacing 1.3 box lt 1 lc rgb '#a0a0a0' opaque width 1
plot datafile using 1:2 with lines lw 2 title 'LAMMPS rigid/nve/small, 1 fs' noenhanced, \
     datafile using 1:3 with points pt 7 ps 0.9 title 'lieflow no_squish, 1 fs' noenhanced
unset output
