// The colors of a colored solve (a ColoredPlan, colored_plan.hpp), mirrored on the device for
// the propagation kernel (propagation_kernel.cuh). Built on the host by the first colored solve
// after an upload, like the CPU's, then uploaded once.
#pragma once

#include "../colored/colored_plan.hpp"
#include "colored_kernel.cuh"
#include "device_buffer.cuh"

namespace steel::cuda {

template <class Real> struct DevicePacks {
    DeviceBuffer<Real> jacobian, response, bias, jy, regularization, friction;
    DeviceBuffer<int32_t> velocity_offset, impulse_index;
};

template <class Real> struct DeviceColored {
    DevicePacks<Real> packs;
    DeviceBuffer<uint32_t> world_color_offset, color_pack_offset, world_serial_offset, serial_rows,
        color_contact_offset, contact_rows;

    // Names every array with what goes in it, for upload_all_or_nothing.
    template <class Pass> void fill(const colored::ColoredPlan<Real>& plan, Pass& pass) {
        pass(packs.jacobian, plan.packs.jacobian);
        pass(packs.response, plan.packs.response);
        pass(packs.bias, plan.packs.bias);
        pass(packs.jy, plan.packs.jy);
        pass(packs.regularization, plan.packs.regularization);
        pass(packs.friction, plan.packs.friction);
        pass(packs.velocity_offset, plan.packs.velocity_offset);
        pass(packs.impulse_index, plan.packs.impulse_index);
        pass(world_color_offset, plan.world_color_offset);
        pass(color_pack_offset, plan.color_pack_offset);
        pass(world_serial_offset, plan.world_serial_offset);
        pass(serial_rows, plan.serial_rows);
        pass(color_contact_offset, plan.color_contact_offset);
        pass(contact_rows, plan.contact_rows);
    }

    ColoredView<Real> view() const { return colored_view_of<Real>(*this); }
};

} // namespace steel::cuda
