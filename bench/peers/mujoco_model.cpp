#include "mujoco_model.hpp"

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

namespace peers {

namespace {

std::string vec(const Vec3& v) {
    std::ostringstream out;
    out.precision(17);
    out << v[0] << ' ' << v[1] << ' ' << v[2];
    return out.str();
}

// A MuJoCo body frame sits at the joint anchor (at the com for free bodies).
Vec3 frame_of(const Scene& s, int32_t body) {
    if (body < 0) return {0, 0, 0};
    const Body& b = s.bodies[size_t(body)];
    return b.joint == Joint::Free ? b.com : b.anchor;
}

void write_body(const Scene& s, int32_t k, std::ostringstream& xml) {
    const Body& b = s.bodies[size_t(k)];
    xml << "<body name=\"b" << k << "\" pos=\"" << vec(sub(frame_of(s, k), frame_of(s, b.parent)))
        << "\">";
    if (b.joint == Joint::Free) xml << "<freejoint/>";
    if (b.joint == Joint::Revolute || b.joint == Joint::Prismatic) {
        xml << "<joint type=\"" << (b.joint == Joint::Revolute ? "hinge" : "slide") << "\" axis=\""
            << vec(b.axis) << "\"";
        if (b.lower > -1e300 && b.upper < 1e300)
            xml << " limited=\"true\" range=\"" << b.lower << ' ' << b.upper << "\"";
        xml << "/>";
    }
    xml << "<inertial pos=\"" << vec(sub(b.com, frame_of(s, k))) << "\" mass=\"" << b.mass
        << "\" diaginertia=\"" << vec(b.inertia) << "\"/>";
    xml << "<geom name=\"g" << k
        << "\" type=\"sphere\" size=\"0.01\" contype=\"0\" conaffinity=\"0\"/>";
    for (size_t child = 0; child < s.bodies.size(); ++child)
        if (s.bodies[child].parent == k) write_body(s, int32_t(child), xml);
    xml << "</body>\n";
}

} // namespace

mjModel* load_mujoco_model(const Scene& s, int sweeps) {
    const size_t contacts = s.contacts.size();
    size_t limits = 0;
    for (const Body& b : s.bodies)
        limits += (b.lower > -1e300) + (b.upper < 1e300);
    // Pyramidal friction: 4 rows per contact (dim 3); limits add rows only when reached.
    const size_t njmax = 4 * contacts + limits + 8, nv = degrees_of_freedom(s);
    std::ostringstream xml;
    xml.precision(17);
    xml << "<mujoco model=\"peer\">\n"
        << "<compiler angle=\"radian\"/>\n"
        << "<option timestep=\"" << s.dt << "\" gravity=\"" << vec(s.gravity)
        << "\" solver=\"PGS\" iterations=\"" << sweeps
        << "\" tolerance=\"0\" cone=\"pyramidal\"><flag warmstart=\"disable\"/></option>\n"
        << "<size njmax=\"" << njmax << "\" nconmax=\"" << contacts + 4 << "\" nstack=\""
        << 50000 + 8 * njmax * (nv + 8) << "\"/>\n"
        << "<worldbody>\n<geom name=\"ground\" type=\"plane\" size=\"0 0 1\" contype=\"0\" "
           "conaffinity=\"0\"/>\n";
    for (size_t k = 0; k < s.bodies.size(); ++k)
        if (s.bodies[k].parent < 0) write_body(s, int32_t(k), xml);
    xml << "</worldbody>\n</mujoco>\n";
    const std::string text = xml.str();
    mjVFS vfs;
    mj_defaultVFS(&vfs);
    mj_makeEmptyFileVFS(&vfs, "peer.xml", int(text.size()));
    std::memcpy(vfs.filedata[0], text.data(), text.size());
    char error[1000] = "";
    mjModel* m = mj_loadXML("peer.xml", &vfs, error, sizeof error);
    mj_deleteVFS(&vfs);
    if (!m) std::fprintf(stderr, "mujoco: %s\n", error);
    return m;
}

} // namespace peers
