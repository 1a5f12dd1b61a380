#!/usr/bin/env python3
"""Reads the ParaView files test_io wrote (DIR) back with VTK and checks counts and values exactly.

Usage: /usr/bin/python3 vtk_readback.py DIR, or --mesh FILE NPOINTS NCELLS NBOUNDARY [FIELD] for one body
surface written by ad_write_vtp_mesh (test_body3), or for the 3D files of test_io3:
  --image3 FILE NX NY NZ X0 Y0 Z0 DX DY DZ ARRAYS [CELL ...]   a .vti of ad_write_vti3
      ARRAYS: the cell arrays in file order, NAME:COMPONENTS joined by commas (the first scalar and the first
      vector are the active ones); CELL: i,j,k and the values of every array's components there, by commas
  --particles3 FILE N ARRAYS [PARTICLE ...]                    a .vtp of ad_write_vtp_particles3
      ARRAYS: the point arrays, names joined by commas; PARTICLE: i,x,y,z then its values in ARRAYS' order
  --series FILE N [NPOINTS]                                     a run's .pvd (fields.pvd, particles.pvd): N data
      sets at increasing times, each read by the reader of its extension (NPOINTS: the last one's points)
Values are compared exactly, as float32. Exit 0 on success, 1 on any mismatch, 77 (ctest's skip code) when
the vtk module cannot be imported.
"""
import os
import sys
import xml.etree.ElementTree as ET

try:
    import vtk
except ImportError as exc:  # VTK's Python module loads only in the system interpreter
    print("vtk_readback: SKIP: cannot import vtk (%s); run with /usr/bin/python3" % exc)
    sys.exit(77)

try:
    import numpy as np
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    np = None

failures = []
checks = 0


def ensure(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def f32(x):
    """x rounded to float32, as the C writer stored it."""
    import struct
    return struct.unpack("<f", struct.pack("<f", x))[0]


def values(arr):
    """A vtkDataArray as a list of tuples (or of numbers for one component)."""
    if arr is None:
        return None
    if np is not None:
        a = vtk_to_numpy(arr)
        return [tuple(float(v) for v in row) for row in a] if a.ndim == 2 else [float(v) for v in a]
    c = arr.GetNumberOfComponents()
    out = []
    for i in range(arr.GetNumberOfTuples()):
        t = arr.GetTuple(i)
        out.append(tuple(t) if c > 1 else t[0])
    return out


def same(got, want, what):
    """Exact comparison of two lists of numbers or tuples."""
    if not ensure(got is not None, what + ": array missing"):
        return
    if not ensure(len(got) == len(want), "%s: %d values, expected %d" % (what, len(got), len(want))):
        return
    for k, (g, w) in enumerate(zip(got, want)):
        if g != w:
            ensure(False, "%s[%d] = %r, expected %r" % (what, k, g, w))
            return
    ensure(True, what)


class Errors:
    """Collects VTK error events, which the readers report instead of raising."""

    def __init__(self):
        self.messages = []

    def __call__(self, obj, event):
        self.messages.append("%s: %s" % (obj.GetClassName(), event))


def read(path):
    ext = os.path.splitext(path)[1]
    reader = {".vtp": vtk.vtkXMLPolyDataReader, ".vti": vtk.vtkXMLImageDataReader}.get(ext)
    if not ensure(reader is not None, "%s: no reader for '%s'" % (path, ext)):
        return None
    r = reader()
    errors = Errors()
    r.AddObserver("ErrorEvent", errors)
    if not ensure(os.path.isfile(path), path + ": missing"):
        return None
    ensure(r.CanReadFile(path), path + ": reader refuses the file")
    r.SetFileName(path)
    r.Update()
    ensure(not errors.messages and r.GetErrorCode() == 0, "%s: read errors %s" % (path, errors.messages))
    return r.GetOutput()


def points(ds):
    pts = ds.GetPoints()
    return values(pts.GetData()) if pts is not None else []


def cell_ids(cells):
    """The point ids of each cell of a vtkCellArray."""
    out = []
    ids = vtk.vtkIdList()
    cells.InitTraversal()
    while cells.GetNextCell(ids):
        out.append([ids.GetId(k) for k in range(ids.GetNumberOfIds())])
    return out


def check_particles(path, n=1000, shift=0.0):
    d = read(path)
    if d is None:
        return
    ensure(d.GetNumberOfPoints() == n, "%s: %d points, expected %d" % (path, d.GetNumberOfPoints(), n))
    ensure(d.GetNumberOfVerts() == n, "%s: %d vertices, expected %d" % (path, d.GetNumberOfVerts(), n))
    same(points(d), [(f32(i + shift), f32(0.5 * i), 0.0) for i in range(n)], path + " points")
    pd = d.GetPointData()
    same(values(pd.GetArray("id")), [float(3 * i + 7) for i in range(n)], path + " id")
    same(values(pd.GetArray("velocity")), [(f32(1.0 + i), f32(-i), 0.0) for i in range(n)], path + " velocity")
    same(values(pd.GetArray("pressure")), [f32(2.0 * i) for i in range(n)], path + " pressure")
    ensure(pd.GetArray("id").GetDataTypeAsString() == "unsigned int", path + ": id is not UInt32")
    same(cell_ids(d.GetVerts()), [[i] for i in range(n)], path + " vertices")


def check_empty(path):
    d = read(path)
    if d is None:
        return
    ensure(d.GetNumberOfPoints() == 0 and d.GetNumberOfCells() == 0, path + ": not empty")
    ensure(d.GetPointData().GetArray("pressure") is None, path + ": has pressure without one given")
    ensure(d.GetPointData().GetArray("velocity") is not None, path + ": no velocity array")


def check_outline(path, closed):
    d = read(path)
    if d is None:
        return
    xy = [(0, 0), (1, 0), (1.5, 0.5), (1, 1), (0, 1)]
    same(points(d), [(f32(x), f32(y), 0.0) for x, y in xy], path + " points")
    ensure(d.GetNumberOfLines() == 1, "%s: %d lines, expected 1" % (path, d.GetNumberOfLines()))
    same(cell_ids(d.GetLines()), [[0, 1, 2, 3, 4, 0] if closed else [0, 1, 2, 3, 4]], path + " polyline")


def check_panels(path, closed):
    """The outline as its panels (ad_write_vtp_panels): a 2-point line per segment, cell data Cp = k, Cf = -k/2."""
    d = read(path)
    if d is None:
        return
    n = 5 if closed else 4
    ensure(d.GetNumberOfLines() == n, "%s: %d lines, expected %d" % (path, d.GetNumberOfLines(), n))
    same(cell_ids(d.GetLines()), [[k, (k + 1) % 5] for k in range(n)], path + " segments")
    cd = d.GetCellData()
    same(values(cd.GetArray("Cp")), [float(k) for k in range(n)], path + " Cp")
    same(values(cd.GetArray("Cf")), [-0.5 * k for k in range(n)], path + " Cf")
    ensure(cd.GetScalars() is not None and cd.GetScalars().GetName() == "Cp", path + ": Cp is not the active scalars")


def check_field(path, add=0.0):
    d = read(path)
    if d is None:
        return
    nx, ny = 7, 5
    ensure(d.GetDimensions() == (nx + 1, ny + 1, 1), "%s: dimensions %s" % (path, d.GetDimensions()))
    ensure(d.GetExtent() == (0, nx, 0, ny, 0, 0), "%s: extent %s" % (path, d.GetExtent()))
    ensure(d.GetOrigin() == (-1.0, 2.0, 0.0), "%s: origin %s" % (path, d.GetOrigin()))
    ensure(d.GetSpacing()[:2] == (0.5, 0.25), "%s: spacing %s" % (path, d.GetSpacing()))
    ensure(d.GetNumberOfCells() == nx * ny, "%s: %d cells" % (path, d.GetNumberOfCells()))
    cd = d.GetCellData()
    same(values(cd.GetArray("value")), [f32(10 * j + i + add) for j in range(ny) for i in range(nx)], path + " value")
    same(values(cd.GetArray("velocity")), [(f32(i + 0.25), f32(-j), 0.0) for j in range(ny) for i in range(nx)],
         path + " velocity")
    ensure(cd.GetScalars() is not None and cd.GetScalars().GetName() == "value", path + ": no active scalars")
    ensure(cd.GetVectors() is not None and cd.GetVectors().GetName() == "velocity", path + ": no active vectors")
    # cell (i, j) holds 10 j + i + add: the cell that contains a point of row j, column i
    i, j = 3, 2
    x = (-1.0 + (i + 0.5) * 0.5, 2.0 + (j + 0.5) * 0.25, 0.0)
    cell = d.FindCell(x, None, -1, 1e-12, vtk.reference(0), [0.0] * 3, [0.0] * 8)
    ensure(cell == j * nx + i, "%s: cell at (%d, %d) is %d" % (path, i, j, cell))


def pvd_sets(path, n):
    """The data sets of a .pvd collection, which must hold n of them; None where the file is missing."""
    if not ensure(os.path.isfile(path), path + ": missing"):
        return None
    root = ET.parse(path).getroot()
    ensure(root.tag == "VTKFile" and root.get("type") == "Collection", path + ": not a VTK collection")
    sets = root.findall("./Collection/DataSet")
    ensure(len(sets) == n, "%s: %d data sets, expected %d" % (path, len(sets), n))
    return sets


def check_pvd(path, kind):
    """Parses a .pvd collection and opens each data set with the reader its extension names."""
    sets = pvd_sets(path, 3)
    if sets is None:
        return
    folder = os.path.dirname(path)
    for k, ds in enumerate(sets):
        ensure(float(ds.get("timestep")) == 0.1 * k, "%s: time %s, expected %r" % (path, ds.get("timestep"), 0.1 * k))
        f = os.path.join(folder, ds.get("file"))
        if kind == "particles":
            check_particles(f, shift=0.5 * k)
        else:
            check_field(f, add=100.0 * k)


def check_mesh(path, npoints, ncells, nboundary, field, arrays=None):
    """A body's surface (ad_write_vtp_mesh): merged points, triangles, its open edges; field[k] = k if named;
    arrays: the names of the cell arrays it must hold instead (the first the active scalars), a value a cell."""
    d = read(path)
    if d is None:
        return
    ensure(d.GetNumberOfPoints() == npoints, "%s: %d points, expected %d" % (path, d.GetNumberOfPoints(), npoints))
    ensure(d.GetNumberOfPolys() == ncells, "%s: %d polys, expected %d" % (path, d.GetNumberOfPolys(), ncells))
    ensure(d.GetNumberOfCells() == ncells, "%s: %d cells, expected %d" % (path, d.GetNumberOfCells(), ncells))
    tris = cell_ids(d.GetPolys())
    ensure(all(len(t) == 3 and len(set(t)) == 3 for t in tris), path + ": a poly is not a triangle of 3 points")
    fe = vtk.vtkFeatureEdges()
    fe.SetInputData(d)
    fe.BoundaryEdgesOn()
    fe.FeatureEdgesOff()
    fe.NonManifoldEdgesOn()
    fe.ManifoldEdgesOff()
    fe.Update()
    got = fe.GetOutput().GetNumberOfLines()
    ensure(got == nboundary, "%s: %d boundary or non-manifold edges, expected %d" % (path, got, nboundary))
    cd = d.GetCellData()
    if arrays:
        for name in arrays:
            a = cd.GetArray(name)
            ensure(a is not None and a.GetNumberOfTuples() == ncells, "%s: no cell array %s of %d" % (path, name, ncells))
        ensure(cd.GetScalars() is not None and cd.GetScalars().GetName() == arrays[0], path + ": no active scalars")
    elif field:
        same(values(cd.GetArray(field)), [float(k) for k in range(ncells)], path + " " + field)
        ensure(cd.GetScalars() is not None and cd.GetScalars().GetName() == field, path + ": no active scalars")
    else:
        ensure(cd.GetNumberOfArrays() == 0, path + ": cell data without a field given")


def main_mesh(args):
    """--mesh FILE NPOINTS NCELLS NBOUNDARY [FIELD | --cells NAME,NAME...]"""
    if len(args) not in (4, 5, 6) or (len(args) == 6 and args[4] != "--cells"):
        print("usage: vtk_readback.py --mesh FILE NPOINTS NCELLS NBOUNDARY [FIELD | --cells NAME,NAME...]")
        return 2
    vtk.vtkObject.GlobalWarningDisplayOff()
    arrays = args[5].split(",") if len(args) == 6 else None
    check_mesh(args[0], int(args[1]), int(args[2]), int(args[3]), args[4] if len(args) == 5 else None, arrays)
    if failures:
        print("vtk_readback: %s: FAILED %d of %d checks" % (args[0], len(failures), checks))
        return 1
    print("vtk_readback: %s: all %d checks passed (VTK %s)" % (args[0], checks, vtk.vtkVersion.GetVTKVersion()))
    return 0


def check_image3(path, n, origin, spacing, arrays, cells):
    """A 3D .vti: extent, origin, spacing, the arrays and their components, and values at the given cells, each
    found by VTK at its centre (so x runs fastest, then y, then z)."""
    d = read(path)
    if d is None:
        return
    nx, ny, nz = n
    ensure(d.GetDimensions() == (nx + 1, ny + 1, nz + 1), "%s: dimensions %s" % (path, d.GetDimensions()))
    ensure(d.GetExtent() == (0, nx, 0, ny, 0, nz), "%s: extent %s" % (path, d.GetExtent()))
    ensure(d.GetOrigin() == tuple(origin), "%s: origin %s, expected %s" % (path, d.GetOrigin(), origin))
    ensure(d.GetSpacing() == tuple(spacing), "%s: spacing %s, expected %s" % (path, d.GetSpacing(), spacing))
    ensure(d.GetNumberOfCells() == nx * ny * nz, "%s: %d cells" % (path, d.GetNumberOfCells()))
    cd = d.GetCellData()
    names = [cd.GetArrayName(k) for k in range(cd.GetNumberOfArrays())]
    ensure(names == [a for a, _ in arrays], "%s: arrays %s, expected %s" % (path, names, [a for a, _ in arrays]))
    for name, comps in arrays:
        arr = cd.GetArray(name)
        if not ensure(arr is not None, "%s: no array %s" % (path, name)):
            return
        ensure(arr.GetNumberOfComponents() == comps and arr.GetNumberOfTuples() == nx * ny * nz,
               "%s: %s has %d x %d values" % (path, name, arr.GetNumberOfTuples(), arr.GetNumberOfComponents()))
        ensure(arr.GetDataTypeAsString() == "float", "%s: %s is not Float32" % (path, name))
    for attr, comps in (("scalars", 1), ("vectors", 3)):
        want = next((a for a, c in arrays if c == comps), None)
        got = (cd.GetScalars() if comps == 1 else cd.GetVectors())
        ensure((got.GetName() if got is not None else None) == want, "%s: active %s %s" % (path, attr, want))
    for cell in cells:
        i, j, k = (int(v) for v in cell[:3])
        x = [origin[a] + (idx + 0.5) * spacing[a] for a, idx in enumerate((i, j, k))]
        found = d.FindCell(x, None, -1, 1e-12, vtk.reference(0), [0.0] * 3, [0.0] * 8)
        ensure(found == (k * ny + j) * nx + i, "%s: cell at (%d, %d, %d) is %d" % (path, i, j, k, found))
        want, at = cell[3:], 0
        for name, comps in arrays:
            got = cd.GetArray(name).GetTuple(found)
            exp = tuple(f32(float(v)) for v in want[at:at + comps])
            ensure(got == exp, "%s: %s at (%d, %d, %d) = %s, expected %s" % (path, name, i, j, k, got, exp))
            at += comps
        ensure(at == len(want), "%s: cell (%d, %d, %d) given %d values for %d" % (path, i, j, k, len(want), at))


def check_particles3(path, n, arrays, particles):
    """A 3D particle .vtp: n points and vertices, exactly the point arrays named, values of the given ones."""
    d = read(path)
    if d is None:
        return
    ensure(d.GetNumberOfPoints() == n, "%s: %d points, expected %d" % (path, d.GetNumberOfPoints(), n))
    ensure(d.GetNumberOfVerts() == n, "%s: %d vertices, expected %d" % (path, d.GetNumberOfVerts(), n))
    pd = d.GetPointData()
    names = sorted(pd.GetArrayName(k) for k in range(pd.GetNumberOfArrays()))
    ensure(names == sorted(arrays), "%s: point arrays %s, expected %s" % (path, names, sorted(arrays)))
    comps = {"id": 1, "velocity": 3, "pressure": 1}
    for name in arrays:
        arr = pd.GetArray(name)
        if ensure(arr is not None, "%s: no array %s" % (path, name)):
            ensure(arr.GetNumberOfComponents() == comps[name], "%s: %s has %d components" % (
                path, name, arr.GetNumberOfComponents()))
    if "id" in arrays:
        ensure(pd.GetArray("id").GetDataTypeAsString() == "unsigned int", path + ": id is not UInt32")
    if n:
        same(cell_ids(d.GetVerts())[:3], [[0], [1], [2]][:n], path + " vertices")
    for spec in particles:
        i, rest = int(spec[0]), [f32(float(v)) for v in spec[1:]]
        ensure(d.GetPoint(i) == tuple(rest[0:3]), "%s: point %d = %s, expected %s" % (path, i, d.GetPoint(i), rest[:3]))
        at = 3
        for name in ("velocity", "id", "pressure"):
            if name in arrays:
                got = pd.GetArray(name).GetTuple(i)
                ensure(got == tuple(rest[at:at + comps[name]]), "%s: %s of %d = %s, expected %s" % (
                    path, name, i, got, rest[at:at + comps[name]]))
                at += comps[name]


def check_series(path, n, last_points=None):
    """A run's .pvd: a VTK collection of n data sets at increasing times, each file read back without error."""
    sets = pvd_sets(path, n)
    if sets is None:
        return
    times = [float(ds.get("timestep")) for ds in sets]
    ensure(all(b > a for a, b in zip(times, times[1:])), "%s: times not increasing: %s" % (path, times))
    d = None
    for ds in sets:
        d = read(os.path.join(os.path.dirname(path), ds.get("file")))
        ensure(d is not None and d.GetNumberOfPoints() > 0, "%s: %s holds no points" % (path, ds.get("file")))
    if last_points is not None and d is not None:
        ensure(d.GetNumberOfPoints() == last_points,
               "%s: the last data set has %d points, expected %d" % (path, d.GetNumberOfPoints(), last_points))


def main_3d(mode, args):
    """--image3 ..., --particles3 ... (one file of test_io3) or --series ... (a run's .pvd)."""
    vtk.vtkObject.GlobalWarningDisplayOff()
    if mode == "--image3" and len(args) >= 11:
        arrays = [(a.split(":")[0], int(a.split(":")[1])) for a in args[10].split(",")]
        check_image3(args[0], [int(v) for v in args[1:4]], [float(v) for v in args[4:7]],
                     [float(v) for v in args[7:10]], arrays, [c.split(",") for c in args[11:]])
    elif mode == "--particles3" and len(args) >= 3:
        check_particles3(args[0], int(args[1]), args[2].split(","), [p.split(",") for p in args[3:]])
    elif mode == "--series" and len(args) in (2, 3):
        check_series(args[0], int(args[1]), int(args[2]) if len(args) == 3 else None)
    else:
        print(__doc__)
        return 2
    if failures:
        print("vtk_readback: %s: FAILED %d of %d checks" % (args[0], len(failures), checks))
        return 1
    print("vtk_readback: %s: all %d checks passed (VTK %s)" % (args[0], checks, vtk.vtkVersion.GetVTKVersion()))
    return 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] in ("--image3", "--particles3", "--series"):
        return main_3d(sys.argv[1], sys.argv[2:])
    if len(sys.argv) >= 2 and sys.argv[1] == "--mesh":
        return main_mesh(sys.argv[2:])
    if len(sys.argv) != 2:
        print("usage: vtk_readback.py DIR | --mesh FILE NPOINTS NCELLS NBOUNDARY [FIELD]")
        return 2
    d = sys.argv[1]
    vtk.vtkObject.GlobalWarningDisplayOff()  # errors are counted through observers instead
    check_particles(os.path.join(d, "particles.vtp"))
    check_empty(os.path.join(d, "particles_empty.vtp"))
    check_outline(os.path.join(d, "outline.vtp"), True)
    check_outline(os.path.join(d, "outline_open.vtp"), False)
    check_panels(os.path.join(d, "panels.vtp"), True)
    check_panels(os.path.join(d, "panels_open.vtp"), False)
    check_field(os.path.join(d, "field.vti"))
    check_pvd(os.path.join(d, "particles.pvd"), "particles")
    check_pvd(os.path.join(d, "fields.pvd"), "fields")
    leftovers = [f for _, _, files in os.walk(d) for f in files if f.endswith(".tmp")]
    ensure(not leftovers, "temporary files left: %s" % leftovers)
    if failures:
        print("vtk_readback: FAILED %d of %d checks (VTK %s)" % (len(failures), checks, vtk.vtkVersion.GetVTKVersion()))
        return 1
    print("vtk_readback: all %d checks passed (VTK %s, %s)" % (checks, vtk.vtkVersion.GetVTKVersion(),
                                                               "numpy" if np is not None else "no numpy"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
