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

    void upload(const colored::ColoredPlan<Real>& plan, cudaStream_t stream) {
        packs.jacobian.upload(plan.packs.jacobian, stream);
        packs.response.upload(plan.packs.response, stream);
        packs.bias.upload(plan.packs.bias, stream);
        packs.jy.upload(plan.packs.jy, stream);
        packs.regularization.upload(plan.packs.regularization, stream);
        packs.friction.upload(plan.packs.friction, stream);
        packs.velocity_offset.upload(plan.packs.velocity_offset, stream);
        packs.impulse_index.upload(plan.packs.impulse_index, stream);
        world_color_offset.upload(plan.world_color_offset, stream);
        color_pack_offset.upload(plan.color_pack_offset, stream);
        world_serial_offset.upload(plan.world_serial_offset, stream);
        serial_rows.upload(plan.serial_rows, stream);
        color_contact_offset.upload(plan.color_contact_offset, stream);
        contact_rows.upload(plan.contact_rows, stream);
    }

    ColoredView<Real> view() const { return colored_view_of<Real>(*this); }
};

} // namespace steel::cuda
